#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: compiles einfuzz's libFuzzer targets with the environment's
# $CC $CXX $CFLAGS $CXXFLAGS, links them with $LIB_FUZZING_ENGINE, and leaves in $OUT each fuzzer,
# its <fuzzer>_seed_corpus.zip (from corpus/ and fuzz/seeds/), <fuzzer>.dict and <fuzzer>.options, and
# fuzz_external's coverage-instrumented plugin einfuzz_example_plugin.so.
# Runs in the project's checkout (the Dockerfile's WORKDIR; .ci/run calls it from the repository root).
# OSS-Fuzz runs it with `bash -eux`; `bash build.sh` ignores the #! line's flags, so they are set here.
set -eu

src="${EINFUZZ_SOURCE_DIR:-$PWD}"
if ! grep -q "project(einfuzz" "$src/CMakeLists.txt" 2>/dev/null; then
  src="$SRC/einfuzz"
fi
build="$WORK/einfuzz-build"
seeds="$WORK/einfuzz-seeds"
jobs="${EINFUZZ_JOBS:-$(nproc)}"
# EINFUZZ_BUILD_TESTS=ON also builds the test suite in this tree, with the same sanitizer flags
# (.ci/run runs it there, RapidCheck counts scaled to EINFUZZ_RC_SCALE percent): one sanitized build
# serves both the fuzzers and the suite.
build_tests="${EINFUZZ_BUILD_TESTS:-OFF}"
rc_scale="${EINFUZZ_RC_SCALE:-100}"
targets=()  # every fuzz/<target>.options names one target
for f in "$src"/fuzz/*.options; do targets+=("$(basename "$f" .options)"); done

# OSS-Fuzz adds -stdlib=libc++ for C++; einfuzz links system C++ libraries (fmt) built against
# libstdc++, and the sanitizers declared in project.yaml (address, undefined) do not need libc++.
CXXFLAGS="${CXXFLAGS//-stdlib=libc++/}"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# CMAKE_BUILD_TYPE stays empty: the optimisation and debug flags are the environment's.
cmake -S "$src" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DEINFUZZ_BUILD_FUZZERS=ON -DEINFUZZ_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DEINFUZZ_SANITIZE=OFF -DEINFUZZ_BUILD_TESTS="$build_tests" -DEINFUZZ_RC_SCALE="$rc_scale" \
  -DEINFUZZ_BUILD_BENCH=OFF \
  -DEINFUZZ_WITH_TORCH=OFF  # no fuzz target runs torch; its module is the slowest file to compile
if [ "$build_tests" = ON ]; then
  cmake --build "$build" -j "$jobs"
else
  cmake --build "$build" --target einfuzz_fuzzers -j "$jobs"
fi

# Seed corpora: every stored case file converted per target, plus the hand-made seeds.
"$build/fuzz/einfuzz_fuzz_seeds" "$seeds" --fresh --copy "$src/fuzz/seeds" "$src/corpus" "$src/fuzz/seeds/fuzz_case"

zip_dir() {  # zip_dir DIR ARCHIVE: the files of DIR at the archive's top level
  if command -v zip >/dev/null 2>&1; then
    rm -f "$2"
    (cd "$1" && zip -q -r "$2" .)
  else
    python3 - "$1" "$2" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        z.write(os.path.join(src, name), name)
PY
  fi
}

mkdir -p "$OUT"
for t in "${targets[@]}"; do
  cp "$build/fuzz/$t" "$OUT/"
  cp "$src/fuzz/$t.dict" "$src/fuzz/$t.options" "$OUT/"
  zip_dir "$seeds/$t" "$OUT/${t}_seed_corpus.zip"
done
# fuzz_external's backend when EINFUZZ_BACKEND is unset: the example C plugin, built with
# -fsanitize=fuzzer-no-link so that libFuzzer's coverage includes the plugin's own code. A project
# fuzzing its own kernel copies its plugin here under this name (docs/continuous-fuzzing.md).
cp "$build/fuzz/einfuzz_example_plugin.so" "$OUT/"

# The runner image has the C and C++ runtimes but not every library the build image has: ship the
# others next to the fuzzers (the targets carry an rpath of $ORIGIN/lib).
mkdir -p "$OUT/lib"
for t in "${targets[@]}"; do
  ldd "$OUT/$t" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      *) [ -e "$OUT/lib/$(basename "$lib")" ] || cp -L "$lib" "$OUT/lib/" ;;  # one copy for every target
    esac
  done
done
echo "einfuzz: fuzzers, seed corpora, dictionaries and options are in $OUT"
