#!/usr/bin/env bash
# End-to-end tests of the einfuzz CLI: every bad input gives a diagnostic and exit 2, never a crash.
# Usage: cli_test.sh <path to einfuzz> <directory of test case files>
set -u
bin=$1
cases=$2
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"

expect 0 "pass(bitwise)" -- check 'a b, b c -> a c' --shapes 2x3,3x4
expect 0 "pass(bitwise)" -- check 'b i j, b j k -> b i k' --shapes 2x3x4,2x4x5 --dtype f32 --values edge --seed 7
expect 0 "pass(bitwise)" -- check 'i, j -> i j' --shapes '0,3' --dtype i64
expect 0 "pass(bitwise)" -- check ', ->' --shapes '(),()' --dtype i32 --values random --seed 3
expect 0 "pass(bitwise)" -- check --shapes '()' -- '->'
expect 0 '"verdict": "pass(bitwise)"' -- check 'i i ->' --shapes 3x3 --json
expect 0 "--shapes" -- check --help
expect 0 "check" -- --help

# Bad patterns: the code, the pattern and a caret under the column.
expect 2 "error[rankMismatch]" -- check 'a b -> c' --shapes 3
expect 2 "      ^" -- check 'a b -> a, b' --shapes 2x3
expect 2 "error[unknownCharacter]" -- check 'a$ -> a' --shapes 2
expect 2 "error[missingArrow]" -- check 'a b' --shapes 2x3
expect 2 "error[einsumOperandCountMismatch]" -- check 'a, b -> a' --shapes 2
expect 2 "error[einsumOperandCountMismatch]" -- check --shapes '' -- '->'
expect 2 "error[incompatibleEinsumBroadcast]" -- check 'i, i -> i' --shapes 2,3
expect 2 '"code": "rankMismatch"' -- check 'a b -> c' --shapes 3 --json

# Bad shapes and sizes: rejected before anything is allocated.
expect 2 "error[malformedShape]" -- check 'a -> a' --shapes 2y3
expect 2 "error[malformedShape]" -- check 'a -> a' --shapes '-1'
expect 2 "error[malformedShape]" -- check 'a, b -> a' --shapes '2,,3'
expect 2 "error[sizeLimitExceeded]" -- check 'a -> a' --shapes 99999999999999999999
expect 2 "error[sizeLimitExceeded]" -- check 'a b -> a' --shapes 4294967296x4294967296
expect 2 "error[sizeLimitExceeded]" -- check 'i, j, k ->' --shapes 1000,1000,1000
expect 2 "max-tensor-elements" -- check 'a -> a' --shapes 100 --max-tensor-elements 10
expect 2 "error[unsupportedDtype]" -- check 'a -> a' --shapes 2 --dtype bool

# Reductions.
expect 0 "pass(bitwise)" -- check --reduce max 'b (h 2) (w 2) -> b h w' --shapes 1x2x4 --values edge --seed 3
expect 0 "pass(bitwise)" -- check --reduce sum '(a b) c -> a c' --axis b=2 --shapes 4x2
expect 0 "pass(bitwise)" -- check --axis b=2 --reduce mean '(a b) c -> c a' --shapes 4x3 --dtype f32
expect 0 "pass(bitwise)" -- check --reduce any 'a b -> a' --shapes 2x3 --dtype bool
expect 0 "pass(bitwise)" -- check --reduce prod 'a ... -> ...' --shapes 3x2x0 --dtype i32
expect 2 "error[unknownReduction]" -- check --reduce median 'a b -> a' --shapes 2x3
expect 2 "error[unsupportedDtype]" -- check --reduce any 'a b -> a' --shapes 2x3
expect 2 "error[unsupportedDtype]" -- check --reduce mean 'a b -> a' --shapes 2x3 --dtype i64
expect 2 "error[emptyFiber]" -- check --reduce max 'a b -> b' --shapes 0x3
expect 2 "error[cannotInferAxis]" -- check --reduce sum '(a b) -> a' --shapes 6
expect 2 "error[dimensionMismatch]" -- check --reduce sum '(a b) -> a' --axis b=4 --shapes 6
expect 2 "error[unusedAxisLength]" -- check --reduce sum 'a -> a' --axis z=3 --shapes 6
expect 2 "error[duplicateAxisLength]" -- check --reduce sum '(a b) -> a' --axis b=3 --axis b=3 --shapes 6
expect 2 "error[invalidArgument]" -- check --reduce sum '(a b) -> a' --axis b --shapes 6
expect 2 "error[invalidArgument]" -- check --reduce sum '(a b) -> a' --axis b=x --shapes 6
expect 2 "error[invalidArgument]" -- check 'a b -> a' --axis b=2 --shapes 2x2
expect 2 "error[invalidIdentifier]" -- check --reduce sum '_ -> ' --shapes 2

# Bad arguments.
expect 2 "error[invalidArgument]" -- check 'a -> a' --shapes 2 --dtype f8
expect 2 "error[invalidArgument]" -- check 'a -> a' --shapes 2 --values weird
expect 2 "error[invalidArgument]" -- check 'a -> a' --shapes 2 --backend nosuch
expect 2 "error[invalidArgument]" -- check 'a -> a'
expect 2 "error[invalidArgument]" -- check --shapes 2
expect 2 "tile" -- check 'a -> a' --shapes 2 --tile 3
expect 2 "seed" -- check 'a -> a' --shapes 2 --seed notanumber
expect 2 "" -- check 'a -> a' --shapes 2 --no-such-flag
expect 2 "" -- frobnicate

# Case files.
expect 0 "pass(bitwise)" -- check --case "$cases/matmul.case.json"
expect 0 "rejects" -- check --case "$cases/expected_error.case.json"
expect 1 "expect     FAILED" -- check --case "$cases/wrong_expect.case.json"
expect 1 "reproduce: $bin check --case" -- check --case "$cases/wrong_expect.case.json"
# The reproduce command spells the CLI as it was typed, so it runs where it was printed: from a
# directory with no build/einfuzz in it, through a relative path and through PATH (the commands
# used to start with build/einfuzz whatever the CLI's path, and a shell there said "not found").
mkdir -p "$tmp/elsewhere/tools"
ln -s "$bin" "$tmp/elsewhere/tools/my einfuzz"
ln -s "$bin" "$tmp/elsewhere/tools/einfuzz"
cp "$cases/wrong_expect.case.json" "$tmp/elsewhere/w.case.json"
reproduce_runs() {  # reproduce_runs HOW ARGS...: the printed command, run verbatim, exits 1 again
  local how=$1 printed
  shift
  printed=$(cd "$tmp/elsewhere" && "$@" 2>&1 | sed -n 's/^ *reproduce: //p' | head -1)
  check "$how: the reproduce command ($printed) reruns the case" \
    bash -c 'cd "$1" && PATH="$1/tools:$PATH" && eval "$2" >/dev/null 2>&1; test $? -eq 1' _ "$tmp/elsewhere" "$printed"
}
reproduce_runs "a relative path with a space" "./tools/my einfuzz" check --case w.case.json
reproduce_runs "a name found on PATH" env PATH="$tmp/elsewhere/tools:$PATH" einfuzz check --case w.case.json
zero="cmd:python3 $cases/zero_backend.py"
reproduce_runs "fuzz, a relative path" ./tools/einfuzz fuzz --backend "$zero" --dtypes f64 --cases 200 --max-findings 1 \
  --corpus found --quiet
# Under --no-store no case file is written: the reproduce command reruns the campaign case alone (it
# used to name the file a storing run would have written), and that run finds the same group.
expect 1 "not stored (--no-store): its reproduce command reruns its campaign case" -- \
  fuzz --backend "$zero" --dtypes f64 --cases 200 --max-findings 1 --no-store --quiet
reproduce_runs "fuzz --no-store, a relative path" ./tools/einfuzz fuzz --backend "$zero" --dtypes f64 --cases 200 \
  --max-findings 1 --no-store --quiet --reduce-percent 50 --layout-percent 40
(cd "$tmp/elsewhere" && ./tools/einfuzz fuzz --backend "$zero" --dtypes f64 --cases 200 --max-findings 1 --no-store \
  --quiet --reduce-percent 50 --layout-percent 40 >"$tmp/nostore.out" 2>&1)
rerun=$(sed -n 's/^ *reproduce: //p' "$tmp/nostore.out" | head -1)
check "fuzz --no-store: the rerun names no case file" bash -c '! grep -q "check --case" <<<"$0"' "$rerun"
check "fuzz --no-store: the rerun finds the same group" bash -c \
  'cd "$1" && diff <(grep "^ *group: " "$2" | head -1) <(eval "$0" 2>&1 | grep "^ *group: " | head -1)' \
  "$rerun" "$tmp/elsewhere" "$tmp/nostore.out"
check "fuzz --no-store: the rerun keeps the generation options" bash -c 'grep -q -- "--reduce-percent 50 --layout-percent 40" <<<"$0"' "$rerun"
expect 2 "error[malformedCase]" -- check --case "$cases/bad_count.case.json"
expect 2 "bad_count.case.json" -- check --case "$cases/bad_count.case.json"
expect 2 "error[malformedCase]" -- check --case "$cases/does-not-exist.case.json"
printf '\x00\xff{{{' >"$tmp/garbage.case.json"
expect 2 "error[malformedCase]" -- check --case "$tmp/garbage.case.json"

# A case over a harness limit (SEMANTICS §13.4) is a verdict on nobody: exit 2 naming the limit,
# never a backend's `reject-disagree`, whatever the backends (issue 10, item 4).
expect 2 "max-materialised-elements" -- check 'a b, b c -> a c' --shapes 600x600,600x600 --backend fused,shuffle,eigen,xtensor
expect 2 "skipped, the case is over a harness limit" -- check 'a b, b c -> a c' --shapes 600x600,600x600 --backend fused,shuffle,eigen,xtensor
expect 2 '"status": "skipped"' -- check 'a b, b c -> a c' --shapes 4x4,4x4 --max-materialised-elements 100 --json --backend fused,shuffle,eigen,xtensor
if [ "${EINFUZZ_REQUIRE_ALL_BACKENDS:-0}" = 1 ]; then
  expect 2 "max-materialised-elements" -- check 'a b, b c -> a c' --shapes 600x600,600x600 --backend numpy,torch
fi
# shrink on a case over a harness limit: a diagnostic (exit 2), never an uncaught exception (exit 134).
expect 2 "over a harness limit" -- shrink "$cases/matmul.case.json" --max-materialised-elements 10
# Limits at the boundary: accepted by the reference and by every in-process backend alike.
expect 0 "pass" -- check 'a b, b c -> a c' --shapes 4x4,4x4 --max-tensor-elements 16 --max-materialised-elements 192 --backend fused,shuffle,eigen,xtensor

# Misses and false alarms of issue 10. A backend that answers 0 for everything is caught on
# `i ->` with [inf, Ω, Ω] although the overflow certificate fails (a finite result for a non-finite
# class is never reachable, ORACLE §3).
expect 1 "mismatch(special" -- check --case "$cases/inf_omega.case.json" --backend "cmd:python3 $cases/zero_backend.py"
# numpy factors `, T ->` (inf · (0 + 1) = inf where the per-term class is NaN): path-dependent, not a
# numpy failure.
if [ "${EINFUZZ_REQUIRE_ALL_BACKENDS:-0}" = 1 ]; then
  expect 0 "indeterminate(special-path-dependent)" -- check --case "$cases/factored_zero_inf.case.json" --backend numpy,numpy-opt,torch
  # An empty operand numpy cannot hold (ndarray needs the lengths' product in intp, a 0 length
  # notwithstanding) is `unsupported` from the numpy client, never a crash blamed on numpy.
  expect 0 "numpy cannot hold an input" -- check 'a b c d -> a b c d' --shapes 268435328x268435455x268435423x0 --backend numpy,numpy-opt
fi

# Bytes that are not UTF-8 in a pattern or a dtype argument: a diagnostic in valid JSON, never an abort.
expect 2 '"status": "bad-input"' -- check $'a\xff -> a' --shapes 2 --json
expect 2 '"status": "bad-input"' -- check 'a -> a' --shapes 2 --dtype $'f\xff' --json

# `einfuzz backends`: the judge and the built-ins are always there; torch, numpy and numpy-opt on a
# machine set up by scripts/setup.sh (scripts/test.sh sets EINFUZZ_REQUIRE_ALL_BACKENDS=1).
listed=(reference fused shuffle eigen xtensor)
if [ "${EINFUZZ_REQUIRE_ALL_BACKENDS:-0}" = 1 ]; then listed+=(torch torch-path-right torch-path-outer numpy numpy-opt); fi
"$bin" backends >"$tmp/backends" 2>&1 || { echo "FAIL: einfuzz backends -> exit $?"; failures=$((failures + 1)); }
for name in "${listed[@]}"; do
  if grep -q "^$name " "$tmp/backends"; then
    echo "ok:   einfuzz backends lists $name"
  else
    echo "FAIL: einfuzz backends does not list $name"
    sed 's/^/    /' "$tmp/backends"
    failures=$((failures + 1))
  fi
done
expect 0 '"name": "reference"' -- backends --json
expect 2 "unknown backend 'nope'" -- backends --backend nope

# Any-order evidence (ORACLE.md §3, §5, §6): a protocol backend (NaN profile `ignore`) that returns a
# scalar 0 for every case. On `i ->` with [inf, Ω, Ω] no evaluation order is finite: mismatch(special),
# exit 1, with the reachable set; elsewhere the exact value and the bound are printed exactly, and a
# min under `ignore` shows the value that profile requires.
cat >"$tmp/zero_backend.py" <<'PY'
import json, struct, sys
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if msg.get("bye"):
        break
    if msg.get("hello"):
        print(json.dumps({"protocol": "einfuzz-backend/1", "name": "zero", "dtypes": ["f64"], "ops": ["einsum", "reduce"],
                          "reductions": ["min"], "nan_profile": "ignore"}), flush=True)
        continue
    for i in msg["inputs"]:
        n = 1
        for d in i["shape"]:
            n *= d
        sys.stdin.buffer.read(8 * n)
    sys.stdout.write(json.dumps({"id": msg["id"], "status": "ok", "shape": []}) + "\n")
    sys.stdout.flush()
    sys.stdout.buffer.write(struct.pack("<d", 0.0))
    sys.stdout.buffer.flush()
PY
cat >"$tmp/inf_omega.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "einsum", "pattern": "i ->", "reduction": null, "axis_lengths": {},
 "dtype": "f64", "inputs": [{"shape": [3], "values": ["inf", "0x1.fffffffffffffp+1023", "0x1.fffffffffffffp+1023"]}],
 "expect": {"error": null}}
JSON
cat >"$tmp/near_one.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "einsum", "pattern": "i ->", "reduction": null, "axis_lengths": {},
 "dtype": "f64", "inputs": [{"shape": [2], "values": ["0x1p+0", "0x1p-60"]}], "expect": {"error": null}}
JSON
cat >"$tmp/min_nan.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "reduce", "pattern": "i ->", "reduction": "min", "axis_lengths": {},
 "dtype": "f64", "inputs": [{"shape": [3], "values": ["nan", "0x1p+0", "0x1p+1"]}], "expect": {"error": null}}
JSON
if command -v python3 >/dev/null; then
  zero="cmd:python3 $tmp/zero_backend.py"
  expect 1 "required by the ignore NaN profile 0x1p+0 (1)" -- check --case "$tmp/min_nan.case.json" --backend "$zero"
  expect 1 "mismatch(special: +Inf or NaN expected)" -- check --case "$tmp/inf_omega.case.json" --backend "$zero"
  expect 1 "reachable {+Inf, NaN}" -- check --case "$tmp/inf_omega.case.json" --backend "$zero"
  expect 1 '"reachable": "{+Inf, NaN}"' -- check --case "$tmp/inf_omega.case.json" --backend "$zero" --json
  expect 1 "exact 0x1.000000000000001p+0 (1.00000000000000000087e+00)" -- check --case "$tmp/near_one.case.json" --backend "$zero"
  expect 1 '"exact": "0x1.000000000000001p+0 (1.00000000000000000087e+00)"' -- check --case "$tmp/near_one.case.json" --backend "$zero" --json
  expect 1 '"bound_exact": "0x1.' -- check --case "$tmp/near_one.case.json" --backend "$zero" --json
fi

finish "CLI tests"
