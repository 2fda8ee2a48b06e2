// The HTML campaign report (campaign_html.cpp) and the judge's |error| / B bins it draws.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "einfuzz/core/check.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/judge.hpp"
#include "einfuzz/harness/replay.hpp"
#include "support/planted_campaign.hpp"

namespace einfuzz {
namespace {

/// The text of `html` between `<section id="ID"` and the next `</section>`.
std::string section(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<section id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  const std::size_t end = html.find("</section>", start);
  return html.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// The bin an independent double computation puts q = d / B in (verdict.hpp's numbering).
std::size_t expected_bin(double q) {
  if (q == 0) return 0;
  if (q > 1) return kErrorBins - 1;
  int exponent = 0;
  const double m = std::frexp(q, &exponent);  // q = m · 2^exponent, m in [1/2, 1)
  // q in (2^-(k+1), 2^-k]: k = -exponent, except at an exact power of two (m = 1/2).
  const long k = m == 0.5 ? 1 - exponent : -exponent;
  return k >= 20 ? 1 : static_cast<std::size_t>(kErrorBins - 2 - k);
}

TEST(JudgeErrorBins, EachElementLandsInTheBinOfItsDistanceOverTheBound) {
  // Σ of 1000 ones: s = 1000 exactly, B ≈ 999·u·1000 ≈ 2^-33, one ulp of 1000 is 2^-43, so k ulps
  // away is q ≈ k·2^-10: the steps below walk through the bins up to beyond the bound.
  const Tensor ones(Shape{1000}, std::vector<double>(1000, 1.0));
  const std::vector<Shape> shapes = {Shape{1000}};
  const auto checked = check_einsum(std::string_view("i ->"), shapes);
  ASSERT_TRUE(checked.ok());
  const Tensor inputs[] = {ones};
  const reference::MultisetEinsum truth = reference::multiset_einsum(*checked, inputs);
  const double bound = truth.elements[0].scaled_bound.approx();
  ASSERT_GT(bound, 0);
  const double ulp = std::ldexp(1.0, -43);
  for (double k : {0.0, 1.0, 3.0, 17.0, 100.0, 500.0, 900.0, 1500.0, 5000.0, -7.0}) {
    const Tensor actual(Shape{}, std::vector<double>{1000.0 + k * ulp});
    const Verdict v = judge_any_order(truth, actual);
    const std::size_t want = expected_bin(std::fabs(k) * ulp / bound);
    std::uint64_t total = 0;
    for (std::uint64_t n : v.error_bins) total += n;
    EXPECT_EQ(total, 1u) << "k = " << k;
    EXPECT_EQ(v.error_bins[want], 1u) << "k = " << k << ": expected bin " << error_bin_label(want);
    EXPECT_EQ(v.kind == VerdictKind::mismatch_value, want == kErrorBins - 1) << "k = " << k;
  }
}

TEST(JudgeErrorBins, TheOrderedJudgeRecordsNone) {
  const Tensor a(Shape{2}, std::vector<double>{1.0, 2.0});
  const Verdict v = judge_ordered(a, a);
  for (std::uint64_t n : v.error_bins) EXPECT_EQ(n, 0u);
}

TEST(CampaignHtml, ARealCampaignHasEverySectionAndBarsForTheAnyOrderBackend) {
  CampaignOptions o = test::counted(300, 1);
  o.progress_interval = 0.001;
  const std::vector<std::string> specs = {"fused", "shuffle"};
  auto result = run_campaign(o, [&] { return make_backends(specs, o.run); });
  ASSERT_TRUE(result.ok()) << render(result.error());
  ASSERT_EQ(result->any_order, (std::vector<bool>{false, true}));
  ASSERT_GE(result->progress_samples.size(), 2u);
  EXPECT_EQ(result->progress_samples.back().second, result->cases);
  const std::string html = campaign_report_html(*result, o);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no network, only the SVG namespace
  for (const char* id : {"verdicts", "accuracy", "rate", "groups"}) EXPECT_FALSE(section(html, id).empty()) << id;
  const std::string accuracy = section(html, "accuracy");
  const std::size_t fused = accuracy.find("<h3>fused</h3>"), shuffle = accuracy.find("<h3>shuffle</h3>");
  ASSERT_NE(fused, std::string::npos);
  ASSERT_NE(shuffle, std::string::npos);
  // fused is ordered: no chart, the words; shuffle is any-order: bars.
  const std::string fused_part = accuracy.substr(fused, shuffle - fused);
  EXPECT_NE(fused_part.find("judged bitwise"), std::string::npos);
  EXPECT_EQ(fused_part.find("<rect"), std::string::npos);
  EXPECT_NE(accuracy.substr(shuffle).find("<rect"), std::string::npos);
  EXPECT_NE(section(html, "rate").find("<polyline"), std::string::npos);
  EXPECT_NE(section(html, "verdicts").find("<th class=\"l\">shuffle</th>"), std::string::npos);
}

TEST(CampaignHtml, HostileTextFromBackendsAndCasesIsEscaped) {
  const std::string hostile = "<script>alert('x')</script>&\"\x1b[2J";
  CampaignResult r;
  r.backends = {hostile};
  r.counts.push_back({});
  r.counts[0][static_cast<std::size_t>(VerdictKind::mismatch_value)] = 1;
  r.error_bins.push_back({});
  r.error_bins[0][kErrorBins - 1] = 1;
  r.any_order = {true};
  r.cases = 1;
  Finding f;
  f.signature = hostile;
  f.backends = {hostile};
  f.verdict = "mismatch(value)";
  f.detail = hostile;
  f.reproduce = "build/einfuzz check --case " + hostile;
  f.shrunk.pattern = hostile;
  f.shrunk.inputs.emplace_back(Shape{2}, std::vector<double>{1.5, -0.0});
  ElementEvidence e;
  e.coords = {1};
  e.flat_index = 1;
  e.expected = hostile;
  e.actual = "0x1p+0 (1)";
  f.first = e;
  r.findings.push_back(f);
  const std::string html = campaign_report_html(r, {});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;&amp;&quot;\\x1b[2J"), std::string::npos);
  // The minimal case as a table: its pattern, its input values, the first differing element.
  const std::string groups = section(html, "groups");
  EXPECT_NE(groups.find("<code>0x1.8p+0</code>"), std::string::npos);
  EXPECT_NE(groups.find("<code>-0x0p+0</code>"), std::string::npos);
  EXPECT_NE(groups.find("first differing element"), std::string::npos);
  EXPECT_NE(groups.find(">new</span>"), std::string::npos);
  // One element beyond the bound: one red bar in the histogram.
  EXPECT_NE(section(html, "accuracy").find("fill=\"#c0392b\""), std::string::npos);
}

TEST(CampaignHtml, ReplayPageListsAFailedCaseWithItsTables) {
  ReplayResult r;
  r.backends = {"shuffle"};
  r.any_order = {true};
  ReplayEntry e;
  e.file = "dir/<bad>.case.json";
  e.expect = "accept";
  e.reference = "accepts";
  Case c;
  c.pattern = "i ->";
  c.inputs.emplace_back(Shape{1}, std::vector<double>{2.0});
  e.stored = c;
  e.backends.push_back({"shuffle", make_verdict(VerdictKind::crash, "boom")});
  e.known = {false};
  r.entries.push_back(e);
  r.failed = 1;
  const std::string html = replay_report_html(r, {});
  for (const char* id : {"verdicts", "accuracy", "rate", "groups"}) EXPECT_FALSE(section(html, id).empty()) << id;
  const std::string groups = section(html, "groups");
  EXPECT_NE(groups.find("dir/&lt;bad&gt;.case.json"), std::string::npos);
  EXPECT_NE(groups.find("shuffle: crash"), std::string::npos);
  EXPECT_NE(groups.find("<code>0x1p+1</code>"), std::string::npos);
  EXPECT_NE(groups.find("<pre>build/einfuzz "), std::string::npos);  // its reproduce command
}

}  // namespace
}  // namespace einfuzz
