#!/usr/bin/env bash
# The README's main job: set up, build, then run `einfuzz check` over built-in demo cases and print
# the verdicts (the default fuzz campaign replaces this demo once `einfuzz fuzz` exists).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

bin=build/einfuzz
status=0
demo() {
  echo "\$ einfuzz check $*"
  "$bin" check "$@" || status=1
  echo
}
demo 'a b, b c -> a c' --shapes 64x48,48x32 --dtype f32 --seed 1
demo 'b i j, b j k -> b i k' --shapes 8x16x16,8x16x16 --dtype f64 --values edge --seed 2
demo 'i i j -> i j' --shapes 5x5x7 --dtype i64 --values edge --seed 3
demo '... i, ... i -> ... i' --shapes 2x1x4,3x4 --dtype f32 --seed 4
demo 'i j, j k -> i k' --shapes 3x0,0x4 --dtype f64
demo 'i, j -> j i' --shapes 7,1 --dtype i32 --values iota
demo 'batch inner, inner out, out -> batch' --shapes 4x9,9x6,6 --dtype f64 --values edge --seed 5

echo "\$ einfuzz check 'a b -> a, b' --shapes 2x3     # bad input: a diagnostic, exit status 2"
"$bin" check 'a b -> a, b' --shapes 2x3 || true
exit $status
