# Shared by the CLI end-to-end scripts (sourced after `bin` is set): a temporary directory removed
# on exit, a failure count, `expect` and `check`, and `finish` that reports and sets the exit status.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect STATUS NEEDLE -- ARGS...: run einfuzz, check the exit status and that the combined output
# contains the fixed string. A failure shows the first `show_lines` lines of the output.
show_lines=${show_lines:-1000}
expect() {
  local want=$1 needle=$2
  shift 3
  "$bin" "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ] || ! grep -qF -- "$needle" "$tmp/out"; then
    echo "FAIL: einfuzz $* -> exit $got (want $want), output must contain: $needle"
    sed 's/^/    /' "$tmp/out" | head -"$show_lines"
    failures=$((failures + 1))
  else
    echo "ok:   einfuzz $*"
  fi
}

# check DESCRIPTION COMMAND...: a shell condition that must hold.
check() {
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

# finish WHAT: exit 1 with the number of failures, else say that all WHAT passed.
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures failing $1"
    exit 1
  fi
  echo "all $1 passed"
}
