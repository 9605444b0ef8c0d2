#!/usr/bin/env bash
# The sm_90a kernels' compiler launcher (cmake/wgmma_serialization_guard.sh) against a stand-in
# compiler: a compile whose ptxas reports wgmma serialized (C7511, C7520) fails and leaves no object;
# other ptxas infos (C7519) and a clean compile pass with their object; a failing compile keeps
# its own status. Usage: test_wgmma_serialization_guard.sh GUARD
set -euo pipefail
guard=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The stand-in: prints $MESSAGE to stderr, writes the file after -o, exits with $STATUS.
cat > "$work/compiler" <<'STANDIN'
#!/usr/bin/env bash
out=""; previous=""
for arg in "$@"; do [[ $previous == "-o" ]] && out=$arg; previous=$arg; done
printf '%s\n' "$MESSAGE" >&2
echo object > "$out"
exit "$STATUS"
STANDIN
chmod +x "$work/compiler"
fail() { echo "FAILED: $*" >&2; exit 1; }
run() {  # MESSAGE STATUS -> the guard's status; its stderr in $work/stderr
    rm -f "$work/k.o"
    MESSAGE=$1 STATUS=$2 "$guard" "$work/compiler" -c k.cu -o "$work/k.o" 2>"$work/stderr" && return 0 || return $?
}
serialized="ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized"
run "$serialized" 0 && fail "C7511 passed"
[[ -e $work/k.o ]] && fail "C7511 left its object"
grep -q "(C7511)" "$work/stderr" || fail "ptxas's own message was not passed on"
grep -q "error: ptxas serialized wgmma" "$work/stderr" || fail "no error line"
run "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to" 0 &&
    fail "C7520 passed"
[[ -e $work/k.o ]] && fail "C7520 left its object"
run "ptxas info    : (C7519) warpgroup.arrive is injected" 0 || fail "C7519 failed the compile"
[[ -e $work/k.o ]] || fail "C7519 lost its object"
run "" 0 || fail "a clean compile failed"
[[ -e $work/k.o ]] || fail "a clean compile lost its object"
status=0
run "error: something else" 3 || status=$?
[[ $status -eq 3 ]] || fail "a failing compile's status became $status"
echo "passed"
