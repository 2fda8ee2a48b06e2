#!/usr/bin/env bash
# End-to-end tests of VJP cases in the CLI (issue 13): check --vjp with its cotangent values, VJP
# case files through check and replay, fuzz --vjp-percent, and every bad VJP input a diagnostic
# with exit 2, never a crash.
# Usage: vjp_cli_test.sh <path to einfuzz>
set -u
bin=$1
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"

# check --vjp: the cotangent has the forward output's shape; the reference computes the gradients.
expect 0 "case       vjp of einsum 'i j, j k -> i k'  dtype f64  shapes 2x3,3x4  cotangent 2x4" -- \
  check 'i j, j k -> i k' --shapes 2x3,3x4 --vjp
expect 0 "gradients 2x3,3x4" -- check 'i j, j k -> i k' --shapes 2x3,3x4 --vjp --cotangent-values edge
expect 0 "gradients 2x3" -- check --reduce max 'a b -> a' --shapes 2x3 --values edge --vjp --dtype f32
expect 0 "cotangent ()" -- check 'i i ->' --shapes 3x3 --vjp --cotangent-values iota
expect 0 '"kind": "vjp-reduce"' -- check --reduce mean '(a b) -> a' --axis b=2 --shapes 4 --vjp --json
expect 0 '"cotangent_shape": [' -- check --reduce prod 'a b -> b' --shapes 2x3 --vjp --cotangent-values ones --json

# Bad VJP input: exit 2 with the diagnostic.
expect 2 "error[notDifferentiable]" -- check --reduce any 'a b -> a' --shapes 2x3 --dtype bool --vjp
expect 2 "error[notDifferentiable]" -- check --reduce all 'a -> ' --shapes 3 --dtype bool --vjp
expect 2 "error[notDifferentiable]" -- check 'i j -> i' --shapes 2x3 --dtype i32 --vjp
expect 2 "error[notDifferentiable]" -- check --reduce sum 'a -> ' --shapes 3 --dtype i64 --vjp
expect 2 "error[cotangentShapeMismatch]" -- check 'i j -> i' --shapes 2x3 --vjp --cotangent-shape 3
expect 2 "error[cotangentShapeMismatch]" -- check 'i j -> i' --shapes 2x3 --vjp --cotangent-shape '()'
expect 2 '"code": "cotangentShapeMismatch"' -- check 'i j -> i' --shapes 2x3 --vjp --cotangent-shape 2x1 --json
expect 2 "error[malformedShape]" -- check 'i j -> i' --shapes 2x3 --vjp --cotangent-shape 2,3
expect 2 "error[invalidArgument]: --cotangent-values must be one of" -- check 'i -> i' --shapes 2 --vjp --cotangent-values big
expect 2 "need --vjp" -- check 'i -> i' --shapes 2 --cotangent-values edge
expect 2 "error[rankMismatch]" -- check 'a b -> a' --shapes 3 --vjp  # the forward diagnostic comes first

# A failing check prints the reproduce command with the VJP flags.
expect 2 "--vjp --cotangent-values 'edge' --cotangent-shape '3' -- 'i j -> i'" -- \
  check 'i j -> i' --shapes 2x3 --vjp --cotangent-values edge --cotangent-shape 3 --json

# VJP case files: check and replay read them; a wrong cotangent is a diagnostic, not a crash.
cat >"$tmp/good.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "vjp", "of": "reduce", "pattern": "a b -> a", "reduction": "mean",
 "axis_lengths": {}, "dtype": "f64", "inputs": [{"shape": [2, 2], "values": ["0x1p+0", "0x1p+1", "0x1p+0", "-0x1p+0"]}],
 "cotangent": {"shape": [2], "values": ["0x1p+0", "0x1p+1"]}, "expect": {"error": null}}
JSON
cat >"$tmp/bad_shape.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "vjp", "of": "einsum", "pattern": "i j -> i",
 "dtype": "f32", "inputs": [{"shape": [2, 3], "values": ["0x1p+0", "0x1p+1", "0x1p+0", "-0x1p+0", "0x0p+0", "0x1p+0"]}],
 "cotangent": {"shape": [3], "values": ["0x1p+0", "0x1p+1", "0x1p+0"]}}
JSON
cat >"$tmp/any.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "vjp", "of": "reduce", "pattern": "a ->", "reduction": "any",
 "dtype": "bool", "inputs": [{"shape": [2], "values": [true, false]}], "cotangent": {"shape": [], "values": [true]}}
JSON
cat >"$tmp/int.case.json" <<'JSON'
{"format": "einfuzz-case/1", "op": "vjp", "of": "einsum", "pattern": "i ->",
 "dtype": "i32", "inputs": [{"shape": [2], "values": ["1", "2"]}], "cotangent": {"shape": [], "values": ["1"]}}
JSON
expect 0 "gradients 2x2" -- check --case "$tmp/good.case.json" --backend fused,shuffle
expect 0 "1 case" -- replay "$tmp/good.case.json" --backend fused,shuffle
expect 2 "error[cotangentShapeMismatch]" -- check --case "$tmp/bad_shape.case.json"
expect 2 "error[notDifferentiable]" -- check --case "$tmp/any.case.json"
expect 2 "error[notDifferentiable]" -- check --case "$tmp/int.case.json"
expect 2 "check --case" -- repro "$tmp/good.case.json" --backend numpy  # VJP programs: not written, said so

# fuzz --vjp-percent: VJP cases in the campaign (eigen declares no VJPs: it answers them unsupported).
expect 0 "" -- fuzz --cases 120 --seed 3 --vjp-percent 50 --backend fused,shuffle,eigen --no-store --quiet --report "$tmp/r.json"
check "the report counts unsupported VJP cases" grep -q '"unsupported"' "$tmp/r.json"
expect 0 "" -- fuzz --cases 150 --seed 9 --backend fused,shuffle --no-store --quiet --report "$tmp/a.json"
expect 0 "" -- fuzz --cases 150 --seed 9 --vjp-percent 0 --backend fused,shuffle --no-store --quiet --report "$tmp/b.json"
check "--vjp-percent 0 is the default campaign" \
  bash -c "diff <(grep -v '\"seconds\"\|per_second' '$tmp/a.json') <(grep -v '\"seconds\"\|per_second' '$tmp/b.json')"
expect 2 "--vjp-percent: Value 101 not in range 0 to 100" -- fuzz --cases 10 --vjp-percent 101 --no-store --quiet
finish "VJP CLI tests"
