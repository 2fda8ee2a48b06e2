#!/usr/bin/env bash
# Continuous fuzzing: builds the `fuzz` preset (clang + libFuzzer + ASan + UBSan), then runs every
# libFuzzer target in fork mode for SECONDS each over a shared, persistent corpus
# (OUT/corpus/<target>, seeded from corpus/ and fuzz/seeds/), and merges (-merge=1) each corpus down
# to a minimal one at the end. Crashes land in OUT/artifacts/<target>/; the exit status is 1 when
# there is any. See docs/continuous-fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'USAGE'
usage: scripts/fuzz-continuous.sh [-s SECONDS] [-j JOBS] [-o OUT_DIR] [-b BUILD_DIR] [TARGET...]
  -s SECONDS   time per target (default 600)
  -j JOBS      libFuzzer -fork=JOBS worker processes (default: nproc)
  -o OUT_DIR   corpus, artifacts and logs (default fuzz-out)
  -b BUILD_DIR build directory of the fuzz preset (default build-fuzz)
  TARGET       a fuzz/<TARGET>.options name, e.g. fuzz_einsum_diff (default: all of them)
USAGE
}

seconds=600
jobs=$(nproc)
out=fuzz-out
build=build-fuzz
while getopts "s:j:o:b:h" opt; do
  case "$opt" in
    s) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*.options; do targets+=("$(basename "$f" .options)"); done
fi

echo "== building the fuzz preset in $build =="
cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" --target einfuzz_fuzzers -j "$jobs"

mkdir -p "$out"
out=$(cd "$out" && pwd)
"$build/fuzz/einfuzz_fuzz_seeds" "$out/seeds" --fresh --copy fuzz/seeds corpus fuzz/seeds/fuzz_case

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

findings=0
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  max_len=$(sed -n 's/^max_len *= *//p' "fuzz/$t.options")
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  echo "== $t: fork mode, $jobs jobs, ${seconds}s =="
  # The first corpus directory receives new inputs; the seeds directory is only read.
  status=0
  "$bin" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len="$max_len" \
    -dict="fuzz/$t.dict" -artifact_prefix="$out/artifacts/$t/" -print_final_stats=1 \
    "$out/corpus/$t" "$out/seeds/$t" >"$out/logs/$t.log" 2>&1 || status=$?
  grep -E "^#[0-9]+: cov|DONE|stat::" "$out/logs/$t.log" | tail -3 || true

  echo "== $t: merging the corpus =="
  rm -rf "$out/corpus/$t.merged"
  mkdir -p "$out/corpus/$t.merged"
  "$bin" -merge=1 -max_len="$max_len" "$out/corpus/$t.merged" "$out/corpus/$t" "$out/seeds/$t" \
    >"$out/logs/$t.merge.log" 2>&1
  rm -rf "$out/corpus/$t"
  mv "$out/corpus/$t.merged" "$out/corpus/$t"
  echo "   corpus: $(find "$out/corpus/$t" -type f | wc -l) inputs"

  n=$(find "$out/artifacts/$t" -type f | wc -l)
  if [ "$n" -gt 0 ] || [ "$status" -ne 0 ]; then
    findings=$((findings + n))
    echo "!! $t: $n artifact(s) (exit status $status), log $out/logs/$t.log"
    find "$out/artifacts/$t" -type f | head -3 | while read -r a; do
      echo "   scripts/fuzz-artifact-to-case.sh $t $a"
    done
  fi
done

echo "== done: $findings finding(s); corpus in $out/corpus, artifacts in $out/artifacts =="
[ "$findings" -eq 0 ]
