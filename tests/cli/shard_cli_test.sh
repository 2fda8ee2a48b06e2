#!/usr/bin/env bash
# End-to-end test of sharded campaigns (issue 16): `fuzz --shard K/N` for K = 0, 1, 2 merged by
# `einfuzz merge` give the groups and verdict counts of one unsharded run; bad shards and non-reports
# are exit 2; the merged corpus holds each new group's case file.
# Usage: shard_cli_test.sh <path to einfuzz>
set -u
bin=$1
show_lines=40
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
cd "$tmp" || exit 1

# xtensor's min/max divergences (corpus/divergences) are found within these cases.
run=(fuzz --backend fused,xtensor --reduce-percent 100 --cases 300 --seed 4)
expect 1 " new, 0 known" -- "${run[@]}" --corpus whole --report whole.json
check "the unsharded run has groups to compare" test "$(jq '.groups | length' whole.json)" -gt 0
for k in 0 1 2; do
  mkdir -p "shard$k"
  # Each shard in its own directory, like a CI job: its report next to its corpus.
  (cd "shard$k" && "$bin" "${run[@]}" --shard "$k/3" --corpus out/found --report out/report.json --quiet) >"s$k.out" 2>&1
  check "shard $k/3 exits 0 or 1" test $? -le 1
  check "shard $k/3 is in its report" grep -qF "\"index\": $k" "shard$k/out/report.json"
done
# Shard 0 as a CI artifact keeps it (report.json, found/), shard 1 as one that strips out/.
mv shard1/out/* shard1/ && rmdir shard1/out
mkdir -p shard2/deep && mv shard2/out shard2/deep/
check "shard 1/3 of 300 cases runs 100" grep -qF '"cases": 100,' shard1/report.json
expect 1 "einfuzz merge: 3 reports (shards 0/3, 1/3, 2/3)" -- merge shard0/out/report.json shard1/report.json \
  shard2/deep/out/report.json --report merged.json --junit merged.xml --corpus merged-corpus
check "merged: the cases of the unsharded run" test "$(jq .cases merged.json)" = "$(jq .cases whole.json)"
check "merged: the verdict counts of the unsharded run" diff <(jq -S .backends whole.json) <(jq -S .backends merged.json)
check "merged: the groups (signatures, counts, new/known) of the unsharded run" \
  diff <(jq -S '[.groups[] | {signature, count, known}] | sort_by(.signature)' whole.json) \
       <(jq -S '[.groups[] | {signature, count, known}] | sort_by(.signature)' merged.json)
check "merged corpus: one file per new group" \
  test "$(find merged-corpus -name '*.case.json' | wc -l)" -eq "$(jq '[.groups[] | select(.known | not)] | length' merged.json)"
check "merged groups name the merged corpus" test "$(jq -r '.groups[0].case_file' merged.json | cut -d/ -f1)" = merged-corpus
check "merged JUnit fails once per new group" \
  test "$(grep -c '<failure' merged.xml)" -eq "$(jq '[.groups[] | select(.known | not)] | length' merged.json)"
# Merging again into the same corpus: nothing is overwritten, nothing changes.
expect 1 "einfuzz merge: 3 reports" -- merge shard0/out/report.json shard1/report.json shard2/deep/out/report.json --corpus merged-corpus
expect 1 "shards not merged (their cases are missing): 1/3" -- merge shard0/out/report.json shard2/deep/out/report.json

# Bad usage and bad input: exit 2 with a diagnostic.
expect 2 "--shard '3/3' is not K/N" -- fuzz --backend fused --cases 5 --shard 3/3
expect 2 "--shard '1/0' is not K/N" -- fuzz --backend fused --cases 5 --shard 1/0
expect 2 "--shard 'x' is not K/N" -- fuzz --backend fused --cases 5 --shard x
expect 2 "--shard '-1/2' is not K/N" -- fuzz --backend fused --cases 5 --shard=-1/2
echo '{"format": "other"}' >other.json
expect 2 "'other.json' is not a campaign report" -- merge shard0/out/report.json other.json
expect 2 "counted twice" -- merge shard0/out/report.json shard0/out/report.json
expect 2 "another shard count" -- merge shard0/out/report.json whole.json
expect 0 "--allow-mixed" -- merge --help
expect 0 "--shard" -- fuzz --help

finish "shard CLI checks"
