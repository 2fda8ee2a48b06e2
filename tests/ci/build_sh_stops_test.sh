#!/usr/bin/env bash
# .clusterfuzzlite/build.sh stops at its first failing step, however it is invoked: OSS-Fuzz runs it
# with `bash -eux`, .ci/run with plain `bash` (which ignores the #! line's flags). Here the compiler is
# /bin/false, so the configure step fails; the script must exit nonzero without announcing $OUT.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out" "$tmp/work" "$tmp/src"
rc=0
(cd "$src" && CC=/bin/false CXX=/bin/false CFLAGS= CXXFLAGS= LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
  OUT="$tmp/out" SRC="$tmp/src" WORK="$tmp/work" EINFUZZ_JOBS=1 bash .clusterfuzzlite/build.sh) >"$tmp/log" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] || grep -q "are in $tmp/out" "$tmp/log"; then
  echo "FAIL: build.sh went on after its configure step failed (exit $rc):"
  tail -n 20 "$tmp/log"
  exit 1
fi
echo "ok: build.sh stopped at the failing configure step (exit $rc)"
