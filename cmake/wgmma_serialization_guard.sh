#!/usr/bin/env bash
# Compiler launcher of the sm_90a kernels (CMakeLists.txt): runs the compile command given and
# fails it where ptxas reports wgmma serialized (C7511: too few registers for the wgmma
# pipeline, so each wgmma waits for the one before). ptxas prints that as info, which
# -Werror lets through, and the tensor-core separable passes built so ran 26-48 % slower
# (bench/results/h200/separable/in-place-2026-11-29/RUN.md). The failed compile's object is
# removed, so that the next build compiles it again instead of taking it as up to date.
set -uo pipefail
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
"$@" 2>"$messages"
status=$?
cat "$messages" >&2
if [[ $status -eq 0 ]] && grep -q '(C7511)' "$messages"; then
    object=""
    previous=""
    for arg in "$@"; do
        [[ $previous == "-o" ]] && object=$arg
        previous=$arg
    done
    [[ -n $object ]] && rm -f "$object"
    echo "error: ptxas serialized wgmma (C7511, above): the kernel holds too many registers across" \
        "its wgmma; it would run far slower than built to" >&2
    exit 1
fi
exit $status
