#!/bin/bash
# Builds one libFuzzer target of a source tree the way .clusterfuzzlite/build.sh configures it, with
# .ci/run's $CFLAGS, for side-by-side measurements (bench/side_by_side.py --old-asan/--new-asan,
# --old-nosan/--new-nosan):
#
#   bench/build_libfuzzer.sh SRC BUILD san|nosan [TARGET]
#
# san: .ci/run's flags (ASan + UBSan, -fsanitize=fuzzer-no-link); nosan: the same flags without
# -fsanitize=address,undefined -fno-sanitize-recover=undefined. TARGET (default fuzz_einsum_diff)
# ends up at BUILD/fuzz/TARGET with its .options and .dict beside it; J sets the build's jobs.
set -euo pipefail
src=$1 build=$2 kind=$3 target=${4:-fuzz_einsum_diff}
common="-O1 -g -gline-tables-only -fno-omit-frame-pointer -fsanitize=fuzzer-no-link"
case "$kind" in
  san) flags="$common -fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
  nosan) flags="$common" ;;
  *) echo "build_libfuzzer.sh: the third argument is san or nosan, not '$kind'" >&2; exit 2 ;;
esac
LDFLAGS="-fuse-ld=lld" cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DEINFUZZ_BUILD_FUZZERS=ON -DEINFUZZ_LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
  -DEINFUZZ_SANITIZE=OFF -DEINFUZZ_BUILD_TESTS=OFF -DEINFUZZ_BUILD_BENCH=OFF -DEINFUZZ_WITH_TORCH=OFF >/dev/null
cmake --build "$build" --target "$target" -j "${J:-$(nproc)}"
cp "$src/fuzz/$target.options" "$src/fuzz/$target.dict" "$build/fuzz/"
