#!/usr/bin/env bash
# Turns a libFuzzer crash artifact of a structured target into a readable case file (beside the
# artifact, as <artifact>.case.json); the tool prints the target's verdicts and the `einfuzz check`
# command (with the knobs the target drew) that reproduces them.
# usage: scripts/fuzz-artifact-to-case.sh TARGET ARTIFACT [BUILD_DIR]
#   TARGET: fuzz_einsum_diff | fuzz_reduce_diff | fuzz_pattern | fuzz_backends_diff; BUILD_DIR: any build with fuzz/
#   (default: build-fuzz, else build).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '5,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
target=$1
artifact=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
build=${3:-}
if [ -z "$build" ]; then
  for b in "$root/build-fuzz" "$root/build"; do
    if [ -x "$b/fuzz/einfuzz_artifact_to_case" ]; then build=$b; break; fi
  done
fi
tool="$build/fuzz/einfuzz_artifact_to_case"
if [ ! -x "$tool" ]; then
  echo "fuzz-artifact-to-case: no einfuzz_artifact_to_case under build-fuzz/ or build/ (build target einfuzz_fuzzers)" >&2
  exit 2
fi
out="$artifact.case.json"
"$tool" --target "$target" -o "$out" "$artifact"
echo "replay the input:  $build/fuzz/$target $artifact"
