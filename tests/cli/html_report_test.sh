#!/usr/bin/env bash
# The HTML campaign report in a real browser: headless Chromium renders the page of a short campaign
# (fused, shuffle and the any-order eigen), the rendered DOM must show every section and bars in the
# accuracy histogram, and a screenshot is kept as a CI artifact.
# Usage: html_report_test.sh <path to einfuzz> <source directory> <artifact directory>
# Exit 77 (CTest SKIP_RETURN_CODE) only when no chromium is installed; with EINFUZZ_REQUIRE_ALL_BACKENDS=1
# (scripts/test.sh, after setup.sh installed it) a missing chromium is a failure instead.
set -u
bin=$1
src=$2
artifacts=$3
show_lines=40
chromium=${EINFUZZ_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  if [ "${EINFUZZ_REQUIRE_ALL_BACKENDS:-0}" = 1 ]; then
    echo "FAIL: chromium is not installed (scripts/setup.sh installs the Debian package 'chromium')"
    exit 1
  fi
  echo "SKIP: chromium is not installed (scripts/setup.sh installs the Debian package 'chromium')"
  exit 77
fi
# shellcheck source=prelude.sh
source "$(dirname "$0")/prelude.sh"
cd "$tmp" || exit 1

# A campaign's exit status says whether it found something new; this test is about its page.
"$bin" fuzz --cases 300 --seed 1 --backend fused,shuffle,eigen --no-store --quiet \
  --known "$src/corpus/divergences" --html report.html >fuzz.out 2>&1
status=$?
check "fuzz --html ran (exit $status)" test "$status" -le 1
check "fuzz --html wrote the page" test -s report.html
check "the page has no script" bash -c '! grep -qi "<script" report.html'

# browser ARGS...: headless Chromium with its own profile, never waiting for ever.
browser() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
    "$@" 2>>"$tmp/chromium.log"
}
browser --dump-dom "file://$tmp/report.html" >dom.html
check "chromium rendered the page (--dump-dom)" test -s dom.html
for id in verdicts accuracy rate groups; do
  check "the rendered page has the section '$id'" grep -qF "<section id=\"$id\"" dom.html
done
sed -n '/<section id="accuracy"/,/<\/section>/p' dom.html >accuracy.html
check "the rendered histogram has bars (<rect)" grep -qF '<rect' accuracy.html
check "fused (ordered) says judged bitwise" grep -qF 'judged bitwise' accuracy.html
check "the rendered rate chart has a polyline" grep -qF '<polyline' dom.html
check "the verdict matrix names eigen" grep -qF '<th class="l">eigen</th>' dom.html

mkdir -p "$artifacts"
shot="$artifacts/campaign-report.png"
rm -f "$shot"
browser --screenshot="$shot" --window-size=1200,2000 "file://$tmp/report.html" >/dev/null
cp report.html "$artifacts/campaign-report.html"
check "the screenshot is a PNG" bash -c "head -c 8 '$shot' | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a"
# IHDR: width 1200 (0x4b0) and height 2000 (0x7d0), big-endian, at byte 16.
check "the screenshot is 1200 x 2000" bash -c "od -An -tx1 -j16 -N8 '$shot' | tr -d ' \n' | grep -qx 000004b0000007d0"
check "the screenshot is not empty (over 10 kB)" test "$(stat -c %s "$shot" 2>/dev/null || echo 0)" -gt 10000
if [ "$failures" -ne 0 ]; then sed 's/^/    chromium: /' "$tmp/chromium.log" | tail -20; fi
echo "screenshot: $shot"
finish "HTML report browser checks"
