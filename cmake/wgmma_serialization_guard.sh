#!/usr/bin/env bash
# Compiler launcher of the sm_90a kernels (CMakeLists.txt): runs the compile command given and
# fails it where ptxas reports wgmma serialized, each wgmma waiting for the one before: C7511
# (too few registers for the wgmma pipeline), C7518 / C7520 (the accumulators touched where
# ptxas cannot prove the pipeline safe; runtime_kernels/README.md's pitfalls). ptxas prints
# these as info, which -Werror lets through, and the tensor-core separable passes built with
# C7511 ran 26-48 % slower (bench/results/h200/separable/in-place-2026-11-29/RUN.md). The failed
# compile's object is removed, so that the next build compiles it again instead of taking it
# as up to date.
set -uo pipefail
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
"$@" 2>"$messages"
status=$?
cat "$messages" >&2
if [[ $status -eq 0 ]] && grep -qE '\(C75(11|18|20)\)|wgmma[.a-z_]* instructions are serialized' "$messages"; then
    object=""
    previous=""
    for arg in "$@"; do
        [[ $previous == "-o" ]] && object=$arg
        previous=$arg
    done
    [[ -n $object ]] && rm -f "$object"
    echo "error: ptxas serialized wgmma (its info above): the kernel would run far slower than" \
        "written (cmake/wgmma_serialization_guard.sh); -DHALCONV_WGMMA_SERIALIZED_IS_ERROR=OFF" \
        "builds it anyway" >&2
    exit 1
fi
exit $status
