#!/usr/bin/env bash
# Every new group a campaign prints comes with a command that reproduces it, also when the backend
# keeps state from call to call. The faulty plugin under EINFUZZ_FAULTY_MODE=stale answers right on
# its library's first call and zeros afterwards: a group may be confirmed only on an instance that
# has run nothing before, as the printed command's own process has not. (When the campaign kept one
# fresh instance for all its new groups, the groups after the first were confirmed on an instance
# that had answered before, and their commands found nothing.)
#
#   reproduce_commands_test.sh EINFUZZ FAULTY_PLUGIN
set -uo pipefail
einfuzz=$1 plugin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir known  # no stored divergence: every group is new
export EINFUZZ_FAULTY_MODE=stale

"$einfuzz" fuzz --backend "plugin:$plugin" --cases 3000 --seed 1 --no-store --known known >out.txt 2>&1
status=$?
if [ "$status" -ne 1 ]; then
  echo "FAIL: the campaign exited $status, expected 1 (new groups)"; cat out.txt; exit 1
fi
# The summary's groups, each followed by its reproduce line.
grep '^    reproduce: ' out.txt | sed 's/^    reproduce: //' >commands.txt
groups=$(wc -l <commands.txt)
if [ "$groups" -lt 1 ]; then
  echo "FAIL: no group was printed"; cat out.txt; exit 1
fi
failed=0
while IFS= read -r command; do
  # The printed command names the binary as the campaign was called; it runs here, where it ran.
  bash -c "$command" >repro.txt 2>&1 </dev/null
  s=$?
  if [ "$s" -ne 1 ] || ! grep -q "1 new" repro.txt; then
    echo "FAIL: exit $s, not the group it was printed for: $command"; cat repro.txt; failed=1
  else
    echo "ok: reproduces: $command"
  fi
done <commands.txt
[ "$failed" -eq 0 ] || exit 1
# The stateful failures are named as such, not grouped.
if ! grep -q "did not fail again when its shrunk case was re-run" out.txt; then
  echo "FAIL: no failure was left unconfirmed"; cat out.txt; exit 1
fi
echo "PASS: $groups groups, each reproduced by its command"
