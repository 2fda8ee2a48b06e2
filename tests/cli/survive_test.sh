#!/usr/bin/env bash
# End-to-end tests of issue 11 "Campaigns that survive anything": hostile plugins and backends
# (tests/backends/faulty/), non-UTF-8 text, failing writes (/dev/full, RLIMIT_FSIZE), real signals,
# absurd times and wrapped-around options, FIFOs and dangling symlinks in replay.
# Usage: survive_test.sh <path to einfuzz> <faulty plugin .so> <source directory>
set -u
bin=$1
plugin=$2
src=$3
hostile="$src/tests/backends/faulty/hostile_backend.py"
tmp=$(mktemp -d)
cleanup() {
  # The escaped grandchildren of a failed run must not outlive the test.
  [ -f "$tmp/escaped.pids" ] && xargs -r kill -9 <"$tmp/escaped.pids" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
failures=0
case_file="$src/tests/cli/matmul.case.json"
# The --isolate runs below crash the faulty plugin's worker on purpose, dozens of times. In a sanitized
# build each crash is an AddressSanitizer report, and symbolizing its stack (llvm-symbolizer reading
# the CLI's debug information) took about 0.4 s a report: 150 s of this test's 200 s under ASan.
# Those reports are expected and never read, so they go unsymbolized; every other command keeps the
# caller's ASAN_OPTIONS.
crash_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}symbolize=0"

pass() { echo "ok:   $1"; }
fail() {
  echo "FAIL: $1"
  [ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -30
  failures=$((failures + 1))
}
# status WANT DESCRIPTION: the exit status of the last `run` is WANT.
run() { "$bin" "$@" >"$tmp/out" 2>&1; got=$?; }
status() { if [ "$got" -eq "$1" ]; then pass "$2 (exit $got)"; else fail "$2: exit $got, want $1"; fi; }
contains() { if grep -qF -- "$1" "$tmp/out"; then pass "$2"; else fail "$2: output lacks '$1'"; fi; }
json_ok() {  # strict UTF-8 JSON
  if python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' "$1" 2>/dev/null; then
    pass "$2"
  else
    fail "$2: $1 is not UTF-8 JSON"
  fi
}
xml_ok() {
  if python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$1" 2>/dev/null; then pass "$2"; else fail "$2: $1 is not XML"; fi
}
# wait_or_kill PID SECONDS: the exit status of background job PID in $got; SIGKILLed past SECONDS
# (a harness that ignores the signal). A polling loop, not a watchdog subshell.
wait_or_kill() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null
  wait "$1"
  got=$?
}
no_raw_escape() {  # no ESC byte (a backend moving the terminal's cursor) in the output
  if grep -q $'\033' "$1"; then fail "$2: raw ESC byte in $1"; else pass "$2"; fi
}

# --- fuzz --isolate: crash, abort, hang and _exit(0) are verdicts; the campaign goes on ---------
# (The faulty plugin declares f64 einsums only: `--dtypes f64` keeps its cases coming whatever the
# campaign's dtype mix, which f16/bf16 widened.)
# A hung worker spins until the 0.5 s timeout kills it: 8 cases of those (each a full timeout of CPU
# time) show the campaign going on as well as 30.
for mode in segv abort exit0 hang; do
  cases=30
  [ "$mode" = hang ] && cases=8
  ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=$mode run fuzz --backend "plugin:$plugin,fused" --dtypes f64 --cases $cases --isolate --timeout 0.5 --no-store \
    --quiet --report "r-$mode.json" --max-shrink-attempts 2
  status 1 "fuzz --isolate, plugin mode $mode: a failing verdict"
  want=crash
  [ "$mode" = hang ] && want=timeout
  if python3 - "r-$mode.json" "$want" "$cases" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["cases"] == int(sys.argv[3]), r["cases"]  # every case ran: the campaign went on
plugin = next(b["verdicts"] for b in r["backends"] if b["name"].startswith("plugin:"))
assert plugin.get(sys.argv[2], 0) > 0 and plugin.get("pass", 0) + plugin.get("pass(bitwise)", 0) == 0, plugin
PY
  then pass "fuzz --isolate, mode $mode: $cases cases, the plugin's cases are $want, none a pass"; else fail "report r-$mode.json"; fi
done
EINFUZZ_FAULTY_MODE=exit0 run replay "$case_file" --backend "plugin:$plugin" --isolate
status 1 "replay --isolate on a plugin that calls _exit(0)"
contains "exited with status 0 without a complete result" "replay --isolate: _exit(0) is a crash"
cat >exit0.case.json <<'CASE'
{"format": "einfuzz-case/1", "op": "einsum", "pattern": "exit0 -> exit0", "dtype": "f64",
 "inputs": [{"shape": [2], "values": ["0x1p+0", "0x1p+1"]}]}
CASE
run shrink exit0.case.json --backend "plugin:$plugin" --isolate --out shrunk.case.json
status 0 "shrink --isolate on a plugin that calls _exit(0)"
contains "verdict crash" "shrink --isolate: the verdict is crash"

# --- A plugin's load and unload code runs in the harness even under --isolate ---------------------
EINFUZZ_FAULTY_UNLOAD=exit0 run check 'i -> i' --shapes 2 --dtype f64 --backend "plugin:$plugin" --isolate
status 3 "check --isolate, the plugin's destructor calls _exit(0)"
contains "error[backendEndedRun]" "check --isolate: says the plugin ended the run"
EINFUZZ_FAULTY_UNLOAD=exit0 run fuzz --backend "plugin:$plugin" --dtypes f64 --cases 5 --no-store --quiet --isolate
status 3 "fuzz --isolate, the plugin's destructor calls _exit(0)"

# --- What an isolated plugin prints goes to stderr, not into the report on stdout ----------------
"$bin" check 'stdout -> stdout' --shapes 2 --dtype f64 --backend "plugin:$plugin" --isolate --json >"$tmp/json" 2>"$tmp/out"
got=$?
status 0 "check --isolate --json on a plugin that prints to stdout"
if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/json" 2>/dev/null; then
  pass "check --isolate --json: stdout is one JSON document"
else
  fail "check --isolate --json: stdout is not JSON: $(head -c 200 "$tmp/json")"
fi
contains "this line is on standard output" "check --isolate: the plugin's line is on stderr"

# A plugin that closes every descriptor from 3 up does not take the guard's channel with it: the
# run ends with its own status (the guard had used a pipe, so this was backendEndedRun, exit 3).
run check 'closefds -> closefds' --shapes 2 --dtype f64 --backend "plugin:$plugin"
status 0 "check, in-process plugin closes descriptors 3 and up, then answers correctly"
if grep -qF "backendEndedRun" "$tmp/out"; then fail "check: closefds blamed on the plugin ending the run"; else pass "check: closefds is not backendEndedRun"; fi

# --- _exit(0) in process (no --isolate) never looks like a pass ----------------------------------
run check 'exit0 -> exit0' --shapes 2 --dtype f64 --backend "plugin:$plugin"
status 3 "check, in-process plugin calls _exit(0)"
contains "error[backendEndedRun]" "check: says the plugin ended the run"
EINFUZZ_FAULTY_MODE=exit0 run fuzz --backend "plugin:$plugin" --dtypes f64 --cases 5 --no-store --quiet
status 3 "fuzz, in-process plugin calls _exit(0)"
EINFUZZ_FAULTY_MODE=exit0 run replay "$case_file" --backend "plugin:$plugin"
status 3 "replay, in-process plugin calls _exit(0)"
EINFUZZ_FAULTY_MODE=segv run replay "$case_file" --backend "plugin:$plugin"
status 3 "replay, in-process plugin crashes"
# Under AddressSanitizer (the dev preset) the sanitizer catches the SIGSEGV and aborts (abort_on_error),
# so the guard sees SIGABRT there; either way the signal is named.
if grep -qF "AddressSanitizer" "$tmp/out"; then
  contains "SIGABRT" "replay: names the signal (SIGSEGV, turned into SIGABRT by AddressSanitizer)"
else
  contains "SIGSEGV" "replay: names the signal"
fi
run check 'i -> i' --shapes 2 --dtype f64 --backend "plugin:$plugin"
status 0 "check, a well-behaved plugin call still exits 0 through the guard"

# --- Text: invalid UTF-8, control characters, a cut across a character ----------------------------
export EINFUZZ_FAULTY_NAME=$'faulty \xff\xfe plugin \033[2J'
run check 'badtext -> badtext' --shapes 2 --dtype f64 --backend "plugin:$plugin" --json
status 1 "check --json, a message with invalid UTF-8 cut at 2000 bytes"
cp out check.json
json_ok check.json "check --json is UTF-8 JSON"
if python3 -c '
import json,sys; d=json.load(open("check.json"))["backends"][0]["detail"]
assert d.endswith("x...") and "\ufffd" not in d.split("case: ")[-1][:2000], d[-40:]' 2>/dev/null; then
  pass "the message is cut before the character that straddles byte 2000"
else fail "cut at a character boundary"; fi
run check 'badtext -> badtext' --shapes 2 --dtype f64 --backend "plugin:$plugin"
no_raw_escape out "check table: no raw ESC from the backend"
EINFUZZ_FAULTY_MODE=badtext run fuzz --backend "plugin:$plugin" --dtypes f64 --cases 20 --no-store --quiet --report f.json --junit f.xml
status 1 "fuzz --report/--junit with hostile text"
json_ok f.json "fuzz --report is UTF-8 JSON"
xml_ok f.xml "fuzz --junit is well-formed XML"
EINFUZZ_FAULTY_MODE=badtext run replay "$case_file" --backend "plugin:$plugin" --json rp.json --junit rp.xml
status 1 "replay --json/--junit with hostile text"
no_raw_escape out "replay table: no raw ESC"
json_ok rp.json "replay --json is UTF-8 JSON"
xml_ok rp.xml "replay --junit is well-formed XML"
run backends --backend "plugin:$plugin" --json
status 0 "backends --json, a plugin named with invalid UTF-8"
cp out b.json
json_ok b.json "backends --json is UTF-8 JSON"
no_raw_escape b.json "backends --json: the name's ESC is escaped"
unset EINFUZZ_FAULTY_NAME
run check $'a\xff -> a' --shapes 3 --json
cp out p.json
json_ok p.json "check --json, a pattern with a 0xff byte"
run check 'a -> a' --shapes 3 --dtype $'f\xff' --json
cp out d.json
json_ok d.json "check --json, a dtype argument with a 0xff byte"

# --- Writes: complete or absent, and a failure is reported (exit 3) ------------------------------
run shrink exit0.case.json --backend "plugin:$plugin" --isolate --out /dev/full
status 3 "shrink --out /dev/full"
contains "error[io]" "shrink --out /dev/full: the I/O error is named"
"$bin" shrink exit0.case.json --backend "plugin:$plugin" --isolate >/dev/full 2>"$tmp/out"; got=$?
status 3 "shrink to a full standard output"
ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=segv run fuzz --backend "plugin:$plugin" --dtypes f64 --isolate --cases 5 --no-store --quiet --report /dev/full
status 3 "fuzz --report /dev/full"
ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=segv run fuzz --backend "plugin:$plugin" --dtypes f64 --isolate --cases 5 --no-store --quiet --junit /dev/full
status 3 "fuzz --junit /dev/full"
run replay "$case_file" --backend fused --json /dev/full
status 3 "replay --json /dev/full"
# A size-limited filesystem: RLIMIT_FSIZE 0 makes every write of a byte fail (EFBIG).
echo previous >keep.json
# (Its output goes through a pipe: RLIMIT_FSIZE applies to regular files only.)
(ulimit -f 0; ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=segv exec "$bin" fuzz --backend "plugin:$plugin" --dtypes f64 --isolate --cases 5 --quiet \
  --corpus fsize-corpus --report keep.json) 2>&1 | cat >"$tmp/out"
got=${PIPESTATUS[0]}
status 3 "fuzz under RLIMIT_FSIZE=0: corpus and report cannot be written"
contains "not be stored" "the failed store is reported"
if [ "$(cat keep.json)" = previous ]; then pass "the old report is left whole"; else fail "keep.json was damaged"; fi
if [ -z "$(find fsize-corpus -type f 2>/dev/null)" ]; then pass "no partial case file is left"; else
  fail "files left: $(find fsize-corpus -type f -size -1c | head -3)"; fi
# A 0-byte case file left by an older run does not block the finding forever.
ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=segv run fuzz --backend "plugin:$plugin" --dtypes f64 --isolate --cases 5 --quiet --corpus c2
stored=$(find c2 -name '*.case.json' 2>/dev/null | head -1)
[ -n "$stored" ] || stored=c2/missing.case.json
: >"$stored"
ASAN_OPTIONS=$crash_asan EINFUZZ_FAULTY_MODE=segv run fuzz --backend "plugin:$plugin" --dtypes f64 --isolate --cases 5 --quiet --corpus c2
if [ -s "$stored" ] && "$bin" replay "$stored" --backend fused >/dev/null 2>&1; then
  pass "an empty case file of the same name is replaced"; else fail "the 0-byte case file stayed"; fi

# --- Signals: the campaign stops cleanly, reports written, backend processes killed ------------
for sig in INT TERM; do
  rm -f escaped.pids asked
  "$bin" fuzz --backend "cmd:python3 $hostile hang $tmp" --seconds 600 --timeout 300 --corpus sig-corpus \
    --report "sig-$sig.json" --junit "sig-$sig.xml" --quiet >"$tmp/out" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do [ -f asked ] && break; sleep 0.05; done
  kill -"$sig" "$pid"
  # A harness that ignores the signal (a background job starts with SIGINT ignored) is killed later.
  wait_or_kill "$pid" 30
  want=130
  [ "$sig" = TERM ] && want=143
  status "$want" "fuzz stopped by SIG$sig"
  json_ok "sig-$sig.json" "SIG$sig: the JSON report is written"
  xml_ok "sig-$sig.xml" "SIG$sig: the JUnit report is written"
  if grep -q '"stopped_by_signal": [1-9]' "sig-$sig.json"; then pass "SIG$sig: the report says it stopped"; else
    fail "SIG$sig: stopped_by_signal missing"; fi
  sleep 0.2
  alive=0
  # Killed is dead: a zombie (state Z) waits only for init to reap it.
  while read -r p; do
    state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ] && alive=$((alive + 1))
  done <escaped.pids
  if [ "$alive" -eq 0 ]; then pass "SIG$sig: the setsid grandchildren are dead"; else fail "SIG$sig: $alive escaped"; fi
done

# replay (not stopped cleanly): a signal still kills the backend's process group before it ends.
mkdir -p rsig
"$bin" replay "$case_file" --backend "cmd:python3 $hostile hang $tmp/rsig" --timeout 300 >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -f rsig/asked ] && break; sleep 0.05; done
kill -TERM "$pid"
wait_or_kill "$pid" 30
status 143 "replay ended by SIGTERM"
sleep 0.3
if pgrep -f "hostile_backend.py hang $tmp/rsig" >/dev/null; then fail "replay: the backend process outlived SIGTERM"; else
  pass "replay: SIGTERM killed the backend's process group"; fi
xargs -r kill -9 <rsig/escaped.pids 2>/dev/null  # (a signal handler cannot search by token)
# An in-process plugin that hangs cannot be interrupted; a second SIGINT ends the run at once.
EINFUZZ_FAULTY_MODE=hang EINFUZZ_FAULTY_MARK="$tmp/hanging" "$bin" fuzz --backend "plugin:$plugin,fused" --dtypes f64 --seconds 600 \
  --quiet --no-store >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -f hanging ] && break; sleep 0.05; done
# Again and again, as a user would: two signals sent close together may arrive as one.
for _ in $(seq 1 20); do
  kill -INT "$pid" 2>/dev/null || break
  sleep 0.5
done
wait_or_kill "$pid" 30
status 130 "fuzz on a hanging in-process plugin: a second SIGINT ends it"

# --- Time: absurd budgets are bad input; a hung backend costs at most one timeout past the budget ---
for v in 1e10 nan inf -1 0; do
  run fuzz --backend fused --seconds "$v" --no-store --quiet
  status 2 "fuzz --seconds $v"
done
for v in inf nan 0 1e9; do
  run check 'a -> a' --shapes 2 --timeout "$v"
  status 2 "check --timeout $v"
done
rm -f escaped.pids asked
# Case 0 hangs (1 s), the shrink gets the 1 s left before the last timeout, every candidate's restart
# hangs in its hello (1 s, not the 30 s of a first start), the confirming re-run takes the last one.
run fuzz --backend "cmd:python3 $hostile hang-restart $tmp" --seconds 3 --timeout 1 --no-store --quiet --report t.json
status 1 "fuzz on a backend that hangs on cases and on every restart's hello: a new group"
if python3 -c 'import json,sys; s=json.load(open("t.json"))["seconds"]; sys.exit(0 if s <= 3 + 1 + 1 else 1)'; then
  pass "it took at most the budget plus one timeout (3 + 1 s, 1 s slack)"
else fail "took $(python3 -c 'import json; print(json.load(open("t.json"))["seconds"])') s"; fi

# --- Options: wrap-arounds are bad input ---------------------------------------------------------
for a in "--seed -1" "--cases -1" "--jobs -1" "--max-findings -1" "--threads -1" "--tasks -1" "--shuffle-seed -1"; do
  # shellcheck disable=SC2086
  run fuzz --backend fused --no-store --quiet $a
  status 2 "fuzz $a"
done
run check 'a -> a' --shapes 2 --seed -1
status 2 "check --seed -1"
run shrink "$case_file" --max-attempts -1
status 2 "shrink --max-attempts -1"

# --- replay: FIFOs and dangling symlinks are reported, never skipped or blocked on ---------------
mkdir -p odd
cp "$case_file" odd/good.case.json
mkfifo odd/fifo.case.json
ln -s "$tmp/nowhere.case.json" odd/dangling.case.json
timeout 20 "$bin" replay odd --backend fused >"$tmp/out" 2>&1
got=$?
status 1 "replay of a directory with a FIFO and a dangling symlink"
contains "a FIFO" "replay names the FIFO"
contains "dangling symlink" "replay names the dangling symlink"
timeout 20 "$bin" replay odd/fifo.case.json --backend fused >"$tmp/out" 2>&1
got=$?
status 1 "replay of a FIFO given by name does not block"

echo
if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
