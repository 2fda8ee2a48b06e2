#!/usr/bin/env bash
# End-to-end tests of issue 14 in the CLI: `einfuzz profile` (text and JSON, a backend that breaks
# its declared profile, an undeclared dtype, bad --dtype, unknown backend), `fuzz --dtypes`, and f16
# case values that the format cannot hold (malformedCase naming the element).
# Usage: profile_cli_test.sh <path to einfuzz> <tests/cli directory>
set -u
bin=$1
cases=$2
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
zero="cmd:python3 $cases/zero_backend.py"

# f64 has one candidate profile (its storage type): detection runs on every build.
expect 0 "f64   detected f64, declared f64: match" -- profile --backend fused --dtype f64 --out "$tmp/ev"
expect 0 "backend eigen" -- profile --backend eigen --dtype f64 --out "$tmp/ev"
"$bin" profile --backend eigen --dtype f64 --json --out "$tmp/ev" >"$tmp/p.json"
check "profile --json: one document keyed by dtype, accumulate f64, round_inputs null, no evidence" \
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["f64"]
assert set(d)=={"f64"}, d.keys()
assert e["accumulate"]=="f64" and e["round_inputs"] is None and e["evidence"]==[] and e["status"]=="match", e' "$tmp/p.json"

# A dtype the backend does not declare runs nothing and is no finding.
expect 0 "f16   unsupported: xtensor does not declare f16" -- profile --backend xtensor --dtype f16 --out "$tmp/ev"
expect 0 '"status": "unsupported"' -- profile --backend xtensor --dtype bf16 --json --out "$tmp/ev"

# A backend that breaks its declared profile (every einsum returns zeros): exit 1, each excluded
# profile with the case that excludes it and the command that reproduces it.
expect 1 "declared-violated" -- profile --backend "$zero" --dtype f64 --out "$tmp/zero"
expect 1 "reproduce: $bin check --case '$tmp/zero/einsum-" -- profile --backend "$zero" --dtype f64 --out "$tmp/zero"
"$bin" profile --backend "$zero" --dtype f64 --json --out "$tmp/zero" >"$tmp/z.json"
check "profile --json of a violated profile: accumulate null, evidence with case_file and reproduce" \
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["f64"]
assert e["accumulate"] is None and e["status"]=="declared-violated", e
x=e["evidence"][0]; assert x["excludes"]=={"accumulate":"f64","round_inputs":None} and x["reproduce"].startswith(sys.argv[2] + " check --case "), x' "$tmp/z.json" "$bin"
evidence=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["f64"]["evidence"][0]["case_file"])' "$tmp/z.json")
expect 1 "mismatch(value)" -- check --case "$evidence" --backend "$zero"

# Candidates beyond a dtype's storage profile (f32, f16, bf16): ORACLE §8 in the multiset oracle.
expect 0 "f32   detected f32, declared f32: match" -- profile --backend fused --dtype f32 --out "$tmp/ev"
expect 0 "excludes f64: " -- profile --backend eigen --dtype f32 --out "$tmp/ev"
expect 0 '"accumulate": "f32"' -- profile --backend eigen --dtype f32 --json --out "$tmp/ev"
# The default dtypes are the backend's declared float dtypes (zero declares f32 and f64).
expect 1 "f32   detected none" -- profile --backend "$zero" --out "$tmp/zero"
# fused's f16 (once it declares it: before that, unsupported) is its storage type.
expect 0 "f16   " -- profile --backend fused --dtype f16 --out "$tmp/ev"

# The printed reproduce command of an excluded profile reproduces the exclusion: `check --profile
# EXCLUDED` exits 1 with the mismatch, the same case under the declared profile passes (Eigen f32
# accumulates in f32, so f64 is excluded).
"$bin" profile --backend eigen --dtype f32 --json --out "$tmp/eig" >"$tmp/e.json"
python3 -c 'import json,sys
for x in json.load(open(sys.argv[1]))["f32"]["evidence"]:
  if x["excludes"]=={"accumulate":"f64","round_inputs":None}: print(x["reproduce"]); print(x["case_file"])' \
  "$tmp/e.json" >"$tmp/e.txt"
reproduce=$(sed -n 1p "$tmp/e.txt")
excluding=$(sed -n 2p "$tmp/e.txt")
check "the evidence's reproduce command names --profile f64" \
  test "$reproduce" = "$bin check --case '$excluding' --backend 'eigen' --profile f64"
eval "set -- ${reproduce#"$bin" }"
expect 1 "mismatch(value)" -- "$@"
expect 1 "judged under profile f64 (declared f32)" -- "$@"
expect 0 "eigen      pass" -- check --case "$excluding" --backend eigen
expect 0 "eigen      pass" -- check --case "$excluding" --backend eigen --profile declared
# The table prints the same command.
expect 0 "reproduce: $bin check --case '$tmp/eig/" -- profile --backend eigen --dtype f32 --out "$tmp/eig"
expect 0 "--profile f64" -- profile --backend eigen --dtype f32 --out "$tmp/eig"

# check --profile: valid profiles judge; one the case's dtype cannot take is exit 2 before running.
expect 0 "eigen      pass" -- check --case "$excluding" --backend eigen --profile f32
expect 0 "eigen      pass" -- check --case "$excluding" --backend eigen --profile f32+tf32
expect 0 "fused      pass(bitwise)" -- check --case "$excluding" --backend fused --profile f64
expect 2 "error[invalidArgument]: --profile f16 cannot judge a f32 case: the accumulator f16 cannot hold every f32 value" \
  -- check --case "$excluding" --backend eigen --profile f16
expect 2 "--profile bf16 cannot judge a f32 case" -- check --case "$excluding" --backend eigen --profile bf16
expect 2 "--profile f64+tf32 cannot judge a f64 case: tf32 input rounding" -- check 'i ->' --shapes 3 --profile f64+tf32
expect 2 "precision profiles are for float dtypes" -- check 'i ->' --shapes 3 --dtype i32 --profile f64
expect 2 "not a precision profile: 'f8'" -- check 'i ->' --shapes 3 --profile f8
expect 2 "not a precision profile: 'f32+none'" -- check 'i ->' --shapes 3 --profile f32+none
expect 0 "--profile" -- check --help
# replay --profile: the same option; invalid for some case's dtype is exit 2, nothing replayed.
expect 1 "judged under profile f64" -- replay "$excluding" --backend eigen --profile f64
expect 0 " 0 failed" -- replay "$excluding" --backend eigen
expect 1 "reproduce: $bin check --case '$excluding' --backend 'eigen' --profile f64" -- \
  replay "$excluding" --backend eigen --profile f64
expect 2 "--profile f16 cannot judge a f32 case" -- replay "$excluding" --backend eigen --profile f16
expect 0 "--profile" -- replay --help

# Bad input: exit 2 with the diagnostic.
expect 2 "error[invalidArgument]: --dtype: unknown dtype 'f8'" -- profile --backend fused --dtype f8
expect 2 "is listed twice" -- profile --backend fused --dtype f64,f64
expect 2 "i32 has no precision profile" -- profile --backend fused --dtype i32
expect 2 "unknown backend" -- profile --backend nosuch --dtype f64
expect 2 "takes one backend" -- profile --backend fused,eigen --dtype f64
expect 2 "--backend is required" -- profile --dtype f64
expect 0 "the most precise" -- profile --help

# fuzz --dtypes: restricts the generator; bad names and a VJP share without f32/f64 are bad usage.
expect 0 "dtypes f16,bf16" -- fuzz --backend fused --cases 200 --dtypes f16,bf16 --no-store --quiet
expect 0 "dtypes i32" -- fuzz --backend fused,shuffle --cases 200 --dtypes i32 --no-store --quiet
expect 2 "error[invalidArgument]: --dtypes: unknown dtype 'f8'" -- fuzz --cases 10 --dtypes f16,f8
expect 2 "needs f32 or f64" -- fuzz --cases 10 --dtypes f16 --vjp-percent 10
expect 0 "--dtypes" -- fuzz --help
"$bin" fuzz --backend fused --cases 150 --seed 4 --dtypes f32,bf16 --no-store --quiet --report "$tmp/a.json" >/dev/null 2>&1
"$bin" fuzz --backend fused --cases 150 --seed 4 --dtypes f32,bf16 --no-store --quiet --report "$tmp/b.json" >/dev/null 2>&1
check "fuzz --dtypes is deterministic (same counts twice)" \
  python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a["backends"]==b["backends"], (a["backends"], b["backends"])' \
  "$tmp/a.json" "$tmp/b.json"

# f16 case values: one the format cannot hold is malformedCase naming the element; --values draws f16.
cat >"$tmp/bad16.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "einsum", "pattern": "i ->", "dtype": "f16",
 "inputs": [{"shape": [2], "values": ["0x1p+0", "0x1.001p+0"]}]}
JSON
cat >"$tmp/good16.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "einsum", "pattern": "i ->", "dtype": "f16",
 "inputs": [{"shape": [3], "values": ["0x1p+0", "0x1p-24", "0x1.ffcp+15"]}]}
JSON
expect 2 "error[malformedCase]" -- check --case "$tmp/bad16.case.json"
expect 2 "inputs[0].values[1]: string \"0x1.001p+0\" is not exactly representable in f16" -- check --case "$tmp/bad16.case.json"
expect 0 "dtype f16" -- check --case "$tmp/good16.case.json"
expect 0 "dtype bf16" -- check 'i j, j k -> i k' --shapes 2x3,3x4 --dtype bf16 --values edge --seed 3
expect 2 "--dtype must be one of f32, f64, i32, i64, bool, f16, bf16" -- check 'i ->' --shapes 3 --dtype f8

finish "profile CLI tests"
