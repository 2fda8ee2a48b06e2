#!/usr/bin/env bash
# `einfuzz backends` lists each backend's precision profile per float dtype (ORACLE §8): the table's
# accumulate and round_inputs columns and the JSON's objects, for a built-in and a `cmd:` backend;
# and whether it answers VJP cases, with its min/max tie rule (ORACLE §7).
# Usage: backends_profiles_test.sh EINFUZZ SOURCE_DIR
set -euo pipefail
einfuzz=$1
src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

table=$("$einfuzz" backends --backend eigen)
echo "$table"
head -1 <<<"$table" | grep -q 'accumulate  *round_inputs' || fail "no accumulate/round_inputs columns"
grep -q '^eigen .*f32:f32,f64:f64,f16:f16,bf16:bf16  *- ' <<<"$table" || fail "eigen's profiles are not listed"

vjp=$("$einfuzz" backends --backend fused,eigen)
echo "$vjp"
head -1 <<<"$vjp" | grep -q 'strided  *vjp  *ties  *accumulate' || fail "no vjp/ties columns"
grep -q '^fused .* no  *yes  *equal-share  ' <<<"$vjp" || fail "fused's VJPs and tie rule are not listed"
grep -q '^eigen .* no  *no  *-  ' <<<"$vjp" || fail "eigen is listed with VJPs"

py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
spec="cmd:$py $src/tests/backends/half_echo_backend.py '{\"accumulate\":{\"bf16\":\"f32\"},\"round_inputs\":{\"f32\":\"tf32\"}}'"
json=$("$einfuzz" backends --json --backend "$spec")
echo "$json"
"$py" - "$json" <<'PY' || fail "the cmd: backend's profiles are not in the JSON"
import json, sys
b = json.loads(sys.argv[1])["backends"][0]
assert b["accumulate"] == {"f16": "f16", "bf16": "f32", "f32": "f32"}, b["accumulate"]
assert b["round_inputs"] == {"f32": "tf32"}, b["round_inputs"]
assert b["vjp"] is False and b["tie_rule"] is None, (b["vjp"], b["tie_rule"])
PY
"$py" - "$("$einfuzz" backends --json --backend fused)" <<'PY' || fail "fused's VJPs are not in the JSON"
import json, sys
b = json.loads(sys.argv[1])["backends"][0]
assert b["vjp"] is True and b["tie_rule"] == "equal-share", (b["vjp"], b["tie_rule"])
PY
echo "ok"
