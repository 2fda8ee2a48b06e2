#!/usr/bin/env bash
# End-to-end tests of `einfuzz fuzz`, `shrink` and `replay`: exit statuses, reports, determinism.
# Usage: campaign_cli_test.sh <path to einfuzz> <source directory>
set -u
bin=$1
src=$2
show_lines=40
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
cd "$tmp" || exit 1

expect 0 "nothing found" -- fuzz --cases 300 --backend fused --seed 3 --report a.json --junit a.xml
check "the JSON report has no finding" grep -qF '"findings": []' a.json
check "the JSON report counts pass(bitwise)" grep -qF '"pass(bitwise)":' a.json
check "JUnit has one testcase per group (one passing testcase without groups)" \
  grep -qF '<testcase classname="einfuzz.fuzz" name="campaign"' a.xml
check "the JSON report has no group" grep -qF '"groups": []' a.json
expect 0 "300 cases" -- fuzz --cases 300 --backend fused --seed 3 --jobs 2 --report b.json
check "same seed and cases: the same verdict counts (jobs 1 and 2)" \
  diff <(sed -n '/"backends"/,/"findings"/p' a.json) <(sed -n '/"backends"/,/"findings"/p' b.json)
check "nothing stored when nothing was found" test ! -e corpus/found
expect 0 "fuzz 0." -- fuzz --seconds 1 --backend fused,shuffle --no-store
expect 0 "--isolate" -- fuzz --help
# A finding that --no-store keeps out of the corpus says so under its reproduce command (which reads
# the case file a stored run writes), and nothing is written.
mkdir -p no-known
expect 1 "not stored (--no-store)" -- fuzz --no-store --known no-known --cases 300 --backend fused,xtensor --reduce-percent 100 --seed 4
check "--no-store writes no case file" test ! -e corpus/found
expect 3 "cannot write the HTML report" -- fuzz --cases 5 --backend fused --no-store --html no-such-dir/r.html
check "fuzz --html writes a page" bash -c '"$0" fuzz --cases 5 --backend fused --no-store --html r.html >/dev/null 2>&1 && grep -qF "<section id=\"groups\"" r.html' "$bin"
expect 3 "error[io]" -- replay "$src/tests/cli/matmul.case.json" --backend fused --html no-such-dir/r.html
# Every subcommand that runs cases accepts every verdict-deciding option its reproduce commands print.
for sub in check fuzz replay shrink; do
  for option in --threads --tile --tasks --strict-nan-payload --strict-signed-zero --shuffle-seed --max-operands \
                --max-labels --max-tensor-elements --max-materialised-elements --timeout --isolate; do
    expect 0 "$option" -- "$sub" --help
  done
done

# --isolate: every backend call in a forked worker (tests/cli/survive_test.sh has the hostile ones).
expect 0 "nothing found" -- fuzz --isolate --cases 3 --backend fused,shuffle --no-store

# Bad usage: exit 2 with a diagnostic.
expect 2 "unknown backend 'nope'" -- fuzz --backend nope --cases 1
expect 2 "--seconds: must be a positive finite number of seconds" -- fuzz --seconds 0
expect 2 "excludes" -- fuzz --cases 5 --seconds 5
expect 2 "--cases must be at least 1" -- fuzz --cases 0

# Replay: the conformance corpus passes; a wrong `expect` fails; a missing path is bad usage.
expect 0 " 0 failed" -- replay "$src/corpus/conformance" --backend fused --junit r.xml
check "replay JUnit has a testcase per case" grep -qF 'E01.case.json' r.xml
expect 1 "expect: the case expects rankMismatch" -- replay "$src/tests/cli/wrong_expect.case.json" --backend fused
expect 1 "FAIL" -- replay "$src/tests/cli/bad_count.case.json" --backend fused
expect 0 '"status": "pass"' -- replay "$src/corpus/conformance/E01.case.json" --backend fused --json -
expect 2 "does not exist" -- replay "$tmp/nope"

# Known divergences (issue 11): xtensor's min/max divergences found, stored, then known (exit 0);
# one of them removed from the store is a new group again (exit 1, listed as NEW).
expect 1 " new, 0 known" -- fuzz --backend xtensor --reduce-percent 100 --cases 400 --seed 4 --corpus xt --report k1.json
mkdir -p known && cp xt/*.case.json known/
expect 0 " 0 new, " -- fuzz --backend xtensor --reduce-percent 100 --cases 400 --seed 4 --known known --no-store \
  --report k2.json --junit k2.xml
check "every group is known, with its stored file" grep -qF '"case_file": "known/' k2.json
check "no known group fails in JUnit" test "$(grep -c '<failure' k2.xml)" -eq 0
rm "$(ls known/*.case.json | head -1)"
expect 1 "NEW   xtensor" -- fuzz --backend xtensor --reduce-percent 100 --cases 400 --seed 4 --known known --no-store
expect 2 "does not exist" -- fuzz --cases 1 --backend fused --known "$tmp/nope"
# The default --known is corpus/divergences when it exists (here: the source tree's, run from there).
(cd "$src" && "$bin" fuzz --backend xtensor --reduce-percent 100 --cases 200 --seed 4 --no-store --quiet) >dk.out 2>&1
check "the default --known is corpus/divergences" grep -qF "stored divergences known (corpus/divergences)" dk.out

# Replay of stored divergences: each must reproduce its recorded verdict on its library (a strict
# expected failure); one that no longer does fails, naming the file.
expect 0 " 0 failed" -- replay "$src/corpus/divergences" --backend fused,shuffle,eigen,xtensor
sed 's/"verdict": "mismatch(value)"/"verdict": "mismatch(special: NaN expected)"/' \
  "$src/corpus/divergences/reduce-35016d17dfa9260a.case.json" >fixed.case.json
expect 1 "FAIL fixed.case.json" -- replay fixed.case.json --backend xtensor
expect 1 "no longer reproduces" -- replay fixed.case.json --backend xtensor

# Profile surprises (origin.profile): judged under that profile on the recorded backend, and they
# must pass there under the declared profile. Without origin.profile the Eigen f16 mean passes (its
# recorded verdict no longer reproduces); an xtensor divergence given a profile fails as declared.
surprise=$(grep -l '"profile": "f32"' "$src"/corpus/divergences/*.case.json | xargs grep -l '"backend": "eigen"' | head -1)
check "a stored Eigen profile surprise exists" test -n "$surprise"
expect 0 " 0 failed" -- replay "$surprise" --backend eigen,fused,shuffle
expect 0 "judged under profile f32 (declared f16)" -- replay "$surprise" --backend eigen --json -
# repro judges a profile surprise under origin.profile too (the verdict it prints and the program's
# header); --profile overrides it, and one invalid for the case's dtype is exit 2 naming it.
expect 0 "einfuzz verdict on eigen: mismatch(value)" -- repro "$surprise" --backend eigen --out surprise.cpp
check "repro's header names origin.profile" grep -qF "accumulate f32, round_inputs none (ORACLE 8; the case's origin.profile" surprise.cpp
expect 0 "einfuzz verdict on eigen: indeterminate" -- repro "$surprise" --backend eigen --profile f16 --out declared.cpp
check "repro --profile names it" grep -qF "accumulate f16, round_inputs none (ORACLE 8; --profile)" declared.cpp
expect 2 "--profile bf16 cannot judge a f16 case" -- repro "$surprise" --backend eigen --profile bf16
expect 0 "--profile" -- repro --help
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["origin"]["profile"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$surprise" noprofile.case.json
expect 1 "no longer reproduces" -- replay noprofile.case.json --backend eigen
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["origin"]["profile"]="f64"; json.dump(d, open(sys.argv[2], "w"))' \
  "$src/corpus/divergences/reduce-35016d17dfa9260a.case.json" declaredbug.case.json
expect 1 "must pass under the declared profile" -- replay declaredbug.case.json --backend xtensor
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["origin"]["profile"]="f8"; json.dump(d, open(sys.argv[2], "w"))' \
  "$surprise" badprofile.case.json
expect 1 "origin.profile: must be a precision profile" -- replay badprofile.case.json --backend eigen
expect 1 "stale" -- replay noprofile.case.json --backend eigen --json -
# A campaign's --known ignores a profile surprise (it would pass there) but not the same case without it.
mkdir -p known-surprise known-plain && cp "$surprise" known-surprise/ && cp noprofile.case.json known-plain/
expect 0 "0 stored divergences known" -- fuzz --backend fused --cases 1 --known known-surprise --no-store
expect 0 "1 stored divergences known" -- fuzz --backend fused --cases 1 --known known-plain --no-store

# Shrink: bad input and a case that does not fail are exit 2.
expect 2 "nothing to shrink" -- shrink "$src/corpus/conformance/E01.case.json" --backend fused
expect 2 "error[malformedCase]" -- shrink "$src/tests/cli/bad_count.case.json"
expect 2 "shrink takes one backend" -- shrink "$src/corpus/conformance/E01.case.json" --backend all
expect 2 "--known 'no-such-dir' does not exist" -- shrink "$surprise" --backend eigen --known no-such-dir
# Shrink judges under --profile (a profile surprise passes under the declared profile: nothing to
# shrink) and names the shrunk case's group as fuzz would: known with the stored file, or new.
expect 2 "nothing to shrink" -- shrink "$surprise" --backend eigen --known known-surprise
expect 0 "group: known known-surprise/$(basename "$surprise")" -- \
  shrink "$surprise" --backend eigen --profile f32 --known known-surprise --out s.case.json
expect 0 "group: new (no stored divergence under --known has the signature 'eigen | mismatch(value) | reduce/" -- \
  shrink "$surprise" --backend eigen --profile f32 --known no-known --out s.case.json

finish "campaign CLI checks"
