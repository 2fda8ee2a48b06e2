#!/usr/bin/env bash
# fuzz_external end to end (issue 16): replays its seeds against a cmd: backend, catches a wrong cmd:
# and a wrong plugin: backend (non-zero exit with the finding) and a backend that ignores strides, goes
# on past a stored divergence EINFUZZ_KNOWN names, and refuses a bad EINFUZZ_BACKEND or EINFUZZ_KNOWN.
#
# Usage: fuzz_external_test.sh CHECK FUZZ_EXTERNAL SEED_DIR SOURCE_DIR PYTHON LIBFUZZER WRONG_PLUGIN TO_CASE SEEDS
#   CHECK         cmd-numpy | catches-wrong-cmd | catches-wrong-plugin | strided | known | config
#   LIBFUZZER     ON when FUZZ_EXTERNAL is a libFuzzer binary (it then gets -runs=0), else a replay binary
#   WRONG_PLUGIN  a PROTOCOL B plugin with a planted bug (tests/harness/planted_plugin.cpp)
#   TO_CASE       einfuzz_artifact_to_case
#   SEEDS         einfuzz_fuzz_seeds
set -u
check=$1 bin=$2 seeds=$3 src=$4 python=$5 libfuzzer=$6 wrong_plugin=$7 to_case=$8 make_seeds=$9
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

replay_args=()
case "$libfuzzer" in ON|on|1|TRUE|true) replay_args=(-runs=0) ;; esac

# expect STATUS NEEDLE BACKEND BINARY INPUT...: run BINARY over INPUT with EINFUZZ_BACKEND=BACKEND
# (unset when BACKEND is "-"); STATUS is an exit status or "nonzero"; the output must contain NEEDLE.
expect() {
  local want=$1 needle=$2 backend=$3 exe=$4
  shift 4
  if [ "$backend" = - ]; then
    env -u EINFUZZ_BACKEND "$exe" "${replay_args[@]}" "$@" >"$tmp/out" 2>&1
  else
    EINFUZZ_BACKEND=$backend "$exe" "${replay_args[@]}" "$@" >"$tmp/out" 2>&1
  fi
  local got=$?
  local status_ok=0
  if [ "$want" = nonzero ]; then [ "$got" -ne 0 ] && status_ok=1; else [ "$got" -eq "$want" ] && status_ok=1; fi
  if [ "$status_ok" -ne 1 ] || ! grep -qF -- "$needle" "$tmp/out"; then
    echo "FAIL: EINFUZZ_BACKEND=$backend $exe $* -> exit $got (want $want), output must contain: $needle"
    sed 's/^/    /' "$tmp/out" | head -60
    failures=$((failures + 1))
  else
    echo "ok:   EINFUZZ_BACKEND=$backend -> exit $got, '$needle'"
  fi
}

# The replay binary's summary line; libFuzzer's -runs=0 prints its own.
# libFuzzer given files rather than a directory runs each once and prints "Executed <file>" instead.
if [ ${#replay_args[@]} -eq 0 ]; then
  done_line="without a finding" files_done_line="without a finding"
else
  done_line="Done" files_done_line="Executed"
fi

case "$check" in
  cmd-numpy)
    # A PROTOCOL A backend: the numpy reference client. Only the generated hand-made seeds: the
    # stored corpus holds numpy's recorded divergences (corpus/divergences/), findings by design, and
    # the client cannot build the regression seed's input (dimensions whose product overflows).
    expect 0 "$files_done_line" "cmd:$python $src/clients/numpy_backend.py" "$bin" "$src"/fuzz/seeds/fuzz_external/generated-*
    ;;
  catches-wrong-cmd)
    # tests/cli/zero_backend.py answers zeros for every plain einsum: a mismatch on the seed corpus.
    expect nonzero "zero_backend.py: mismatch(value)" "cmd:$python $src/tests/cli/zero_backend.py" "$bin" "$seeds"
    ;;
  catches-wrong-plugin)
    # The planted dropped-term plugin skips one term of sums whose size is not a multiple of 8.
    expect nonzero "dropped-term.so: mismatch(value)" "plugin:$wrong_plugin" "$bin" "$seeds"
    # einfuzz_artifact_to_case --target fuzz_external turns such an input into a case file with the
    # same verdict, for the backend EINFUZZ_BACKEND names.
    found=""
    for f in "$seeds"/*; do
      if EINFUZZ_BACKEND="plugin:$wrong_plugin" "$to_case" --target fuzz_external -o "$tmp/found.case.json" "$f" \
           >"$tmp/to_case" 2>&1 && grep -q "^verdict: plugin:$wrong_plugin mismatch(value)" "$tmp/to_case"; then
        found=$f
        break
      fi
    done
    if [ -n "$found" ] && grep -q "^reproduce: build/einfuzz check --case .*found.case.json" "$tmp/to_case" &&
       grep -qF "plugin:$wrong_plugin" "$tmp/to_case"; then
      echo "ok:   einfuzz_artifact_to_case --target fuzz_external: $(basename "$found") -> a mismatch case file"
    else
      echo "FAIL: einfuzz_artifact_to_case --target fuzz_external gave no mismatch case"
      sed 's/^/    /' "$tmp/to_case" 2>/dev/null | head -20
      failures=$((failures + 1))
    fi
    if EINFUZZ_BACKEND= "$to_case" --target fuzz_external "$seeds/$(ls "$seeds" | head -1)" >"$tmp/to_case" 2>&1; then
      echo "FAIL: einfuzz_artifact_to_case --target fuzz_external without a backend succeeded"; failures=$((failures + 1))
    fi
    ;;
  strided)
    # fuzz_external gives a quarter of its generated inputs strided views (kExternalLayoutPercent), so a
    # backend declaring strided_inputs has its stride handling fuzzed: on 400 generated inputs (a fixed
    # seed), the numpy client passes and the numpy client that reads every view as dense
    # (tests/backends/faulty/strides_ignored_backend.py) is caught; before the layouts it passed too.
    mkdir "$tmp/generated"
    "$python" - "$tmp/generated" <<'PY'
import random, struct, sys
r = random.Random(20261207)
for i in range(400):
    body = bytes(r.randrange(256) for _ in range(96))  # the generator's bytes; no value bytes
    open(f"{sys.argv[1]}/g{i:03d}", "wb").write(bytes([r.randrange(256), 1]) + struct.pack("<H", len(body)) + body)
PY
    expect 0 "$done_line" "cmd:$python $src/clients/numpy_backend.py" "$bin" "$tmp/generated"
    ignored="cmd:$python $src/tests/backends/faulty/strides_ignored_backend.py"
    expect nonzero "strides_ignored_backend.py: mismatch" "$ignored" "$bin" "$tmp/generated"
    if grep -q '"layout": {"strides"' "$tmp/out"; then
      echo "ok:   the finding's case has a layout"
    else
      echo "FAIL: the finding's case has no layout"; failures=$((failures + 1))
    fi
    # einfuzz_artifact_to_case --target fuzz_external decodes the same views: a case file with a layout.
    found=""
    for f in "$tmp/generated"/*; do
      if EINFUZZ_BACKEND=$ignored "$to_case" --target fuzz_external -o "$tmp/found.case.json" "$f" >"$tmp/to_case" 2>&1 &&
         grep -q "^verdict: .*strides_ignored_backend.py mismatch" "$tmp/to_case"; then
        found=$f
        break
      fi
    done
    if [ -n "$found" ] && grep -q '"layout"' "$tmp/found.case.json"; then
      echo "ok:   einfuzz_artifact_to_case --target fuzz_external: $(basename "$found") -> a mismatch case file with a layout"
    else
      echo "FAIL: einfuzz_artifact_to_case --target fuzz_external gave no mismatch case with a layout"
      failures=$((failures + 1))
    fi
    ;;
  known)
    # numpy's stored divergence `a a -> a` on a (0, 4) operand (corpus/divergences/einsum-3b29ad1b9758e5de),
    # stored as found by a campaign of this cmd: backend (origin.backend is the backend's spec), and a
    # seed of a (0, 1) f64 variant of it, which shrinks into the same group.
    numpy="cmd:$python $src/clients/numpy_backend.py"
    mkdir "$tmp/known" "$tmp/other" "$tmp/cases" "$tmp/moved"
    "$python" - "$src/corpus/divergences/einsum-3b29ad1b9758e5de.case.json" "$numpy" "$tmp" <<'PY'
import json, sys
stored, spec, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
case = json.load(open(stored))
json.dump(case, open(f"{tmp}/other/library-name.case.json", "w"))  # origin.backend "numpy": another backend's
case["origin"]["backend"] = case["origin"]["variants"] = spec
json.dump(case, open(f"{tmp}/known/numpy-diagonal.case.json", "w"))
# The same backend as stored from another checkout and working directory: a relative path, python3 found on PATH.
case["origin"]["backend"] = case["origin"]["variants"] = "cmd:python3 ../checkout/clients/numpy_backend.py"
json.dump(case, open(f"{tmp}/moved/numpy-diagonal.case.json", "w"))
variant = {"format": "einfuzz-case/1", "op": "einsum", "pattern": "a a -> a", "dtype": "f64",
           "inputs": [{"shape": [0, 1], "values": []}]}
json.dump(variant, open(f"{tmp}/cases/variant.case.json", "w"))
PY
    "$make_seeds" "$tmp/seed-out" "$tmp/cases" >/dev/null || { echo "FAIL: einfuzz_fuzz_seeds"; failures=$((failures + 1)); }
    input="$tmp/seed-out/fuzz_external"
    unset EINFUZZ_KNOWN
    expect nonzero "numpy_backend.py: reject-disagree" "$numpy" "$bin" "$input"
    export EINFUZZ_KNOWN="$tmp/known"
    expect 0 "is the stored divergence $tmp/known/numpy-diagonal.case.json, not a finding" "$numpy" "$bin" "$input"
    # The backend's family is its spec without directories: the divergence stored from elsewhere is known here.
    export EINFUZZ_KNOWN="$tmp/moved"
    expect 0 "is the stored divergence $tmp/moved/numpy-diagonal.case.json, not a finding" "$numpy" "$bin" "$input"
    # Several paths, ':'-separated; the backend's family keys the group, so another backend's copy of
    # the same divergence does not hide it.
    export EINFUZZ_KNOWN="$tmp/other:$src/corpus/divergences"
    expect nonzero "numpy_backend.py: reject-disagree" "$numpy" "$bin" "$input"
    # A known divergence hides only its own group: the zero backend is still caught.
    export EINFUZZ_KNOWN="$tmp/known"
    expect nonzero "zero_backend.py: mismatch(value)" "cmd:$python $src/tests/cli/zero_backend.py" "$bin" "$seeds"
    # As a campaign, a failure its shrunk case does not repeat (a stateful backend) is not a finding.
    flaky="cmd:$python $src/tests/cli/zero_backend.py --first-sight"
    expect 0 "zero_backend.py --first-sight: mismatch(value) did not fail again when its shrunk case was re-run" \
      "$flaky" "$bin" "$seeds"
    unset EINFUZZ_KNOWN
    expect nonzero "zero_backend.py --first-sight: mismatch(value)" "$flaky" "$bin" "$seeds"
    # A finding that a new process of the backend does not repeat is still reported, and says so.
    expect nonzero "did not repeat on a new instance of the backend" \
      "cmd:$python $src/tests/cli/zero_backend.py --warm-up" "$bin" "$seeds"
    if ! grep -q "^einfuzz fuzz finding: cmd:.*zero_backend.py --warm-up: mismatch" "$tmp/out"; then
      echo "FAIL: the finding itself was not reported"; failures=$((failures + 1))
    fi
    # A finding that repeats there says nothing of the kind.
    expect nonzero "zero_backend.py: mismatch(value)" "cmd:$python $src/tests/cli/zero_backend.py" "$bin" "$seeds"
    if grep -q "did not repeat" "$tmp/out"; then
      echo "FAIL: a repeated finding was said not to repeat"; failures=$((failures + 1))
    fi
    # A hang is reported as it is, after its one timeout: no shrink and no new instance, each of which
    # would spend another whole timeout. The backend logs every case request it reads.
    cat >"$tmp/hang.py" <<PY
import os, sys, time
sys.path.insert(0, "$src/tests/support")
from protocol_a import requests, send
for msg in requests():
    if msg.get("hello"):
        send({"protocol": "einfuzz-backend/1", "name": "hang", "dtypes": ["f64"]})
        continue
    with open("$tmp/hang.log", "a") as log:
        log.write(msg.get("pattern", "") + "\\n")
    time.sleep(3600)
PY
    export EINFUZZ_KNOWN="$tmp/known"
    expect nonzero "hang.py: timeout" "cmd:$python $tmp/hang.py" "$bin" "$input"
    unset EINFUZZ_KNOWN
    if [ "$(wc -l <"$tmp/hang.log")" -eq 1 ]; then
      echo "ok:   the hanging case was sent once"
    else
      echo "FAIL: the hanging case was sent $(wc -l <"$tmp/hang.log") times"; failures=$((failures + 1))
    fi
    # What cannot be read is a configuration error: exit 2 before any input runs.
    export EINFUZZ_KNOWN="$tmp/none"
    expect 2 "fuzz_external: EINFUZZ_KNOWN: " "$numpy" "$bin" "$input"
    export EINFUZZ_KNOWN="$tmp/cases"
    expect 2 "fuzz_external: EINFUZZ_KNOWN names no stored divergence" "$numpy" "$bin" "$input"
    unset EINFUZZ_KNOWN
    ;;
  config)
    # A bad EINFUZZ_BACKEND is one line and exit 2 before any input runs, never a finding.
    expect 2 "fuzz_external: EINFUZZ_BACKEND is 'fused', neither cmd:COMMAND nor plugin:PATH" fused "$bin" "$seeds"
    expect 2 "fuzz_external: cannot load plugin:$tmp/none.so" "plugin:$tmp/none.so" "$bin" "$seeds"
    expect 2 "fuzz_external: cannot start cmd:$tmp/none" "cmd:$tmp/none" "$bin" "$seeds"
    # Unset: the einfuzz_example_plugin.so next to the executable (ClusterFuzzLite's $OUT), else exit 2.
    mkdir "$tmp/out-dir"
    cp "$bin" "$tmp/out-dir/fuzz_external"
    expect 2 "fuzz_external: EINFUZZ_BACKEND is not set and no einfuzz_example_plugin.so lies next to the executable" \
      - "$tmp/out-dir/fuzz_external" "$seeds"
    cp "$(dirname "$bin")/einfuzz_example_plugin.so" "$tmp/out-dir/"
    expect 0 "$done_line" - "$tmp/out-dir/fuzz_external" "$seeds"
    if [ "$(wc -l <"$tmp/out")" -gt 0 ] && grep -q "EINFUZZ_BACKEND is not set" "$tmp/out"; then
      echo "FAIL: the default plugin was not used"; failures=$((failures + 1))
    fi
    ;;
  *)
    echo "fuzz_external_test.sh: unknown check '$check'" >&2
    exit 2
    ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
