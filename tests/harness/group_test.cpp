// Issue 11, one finding per root cause: group signatures and canonical names, the variants of one
// library in one group, every failure attributed, known divergences in `fuzz` and in `replay`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "einfuzz/backends/torch.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/group.hpp"
#include "einfuzz/harness/merge.hpp"
#include "einfuzz/harness/replay.hpp"
#include "einfuzz/harness/run.hpp"
#include "planted_bugs.hpp"
#include "support/planted_campaign.hpp"

namespace einfuzz {
namespace {

using test::counted;
using test::planted;

namespace fs = std::filesystem;

fs::path group_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("einfuzz-group-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Group, CanonicalPatternsRenameInFirstAppearanceOrderWithCanonicalSpacing) {
  EXPECT_EQ(canonical_pattern(Op::einsum, "row col,col->row"), "a b, b -> a");
  EXPECT_EQ(canonical_pattern(Op::einsum, "  z ... (y),,y->  ... z"), "a ... b, , b -> ... a");
  EXPECT_EQ(canonical_pattern(Op::einsum, "_ _ _->_"), "a a a -> a");
  EXPECT_EQ(canonical_pattern(Op::einsum, "->"), "->");
  // Rejected by the parser: only identifier words are renamed, the rest stays as written.
  EXPECT_EQ(canonical_pattern(Op::einsum, "x $ y -> y"), "a $ b -> b");
  // Reduce: anonymous and unit axes kept; supplied lengths follow their names; unused ones too.
  Case r;
  r.op = Op::reduce;
  r.reduction = "sum";
  r.pattern = "(h w) 3 1 c -> c h";
  r.axis_lengths = {{"w", 2}, {"q", 5}};
  const Case canon = canonical_names(r);
  EXPECT_EQ(canon.pattern, "(a b) 3 1 c -> c a");
  EXPECT_EQ(canon.axis_lengths, (std::vector<std::pair<std::string, std::int64_t>>{{"b", 2}, {"d", 5}}));
}

TEST(Group, TheSignatureNamesFamilyVerdictOpDtypePatternLengthClassesAndSpecials) {
  Case c;
  c.pattern = "i, j ->";
  c.dtype = DType::f64;
  c.inputs = {Tensor(Shape{3}, std::vector<double>{std::numeric_limits<double>::infinity(), -0.0, 0x1p-1074}),
              Tensor(DType::f64, Shape{0})};
  EXPECT_EQ(group_signature(c, backend_family("torch-path-right"), "mismatch(special: NaN expected)"),
            "torch | mismatch(special: NaN expected) | einsum | f64 | a, b -> | (n),(0) | +inf,-0,subnormal");
  EXPECT_EQ(backend_family("numpy-opt"), "numpy");
  EXPECT_EQ(backend_family("fused"), "fused");
  c.inputs[0] = Tensor(Shape{1}, std::vector<double>{0x1.8p1023});
  EXPECT_EQ(special_values(c), "near-max");
  EXPECT_EQ(length_classes(c), "(1),(0)");
}

TEST(Group, AnEmptyContractionIsOneGroupPerFamilyAndOp) {
  // Two of the shapes torch's empty contraction shrinks to (corpus/divergences/README.md): an
  // infinity times the empty sum, and a product that overflows before it meets it.
  Case inf_times_empty;
  inf_times_empty.pattern = "a, ->";
  inf_times_empty.dtype = DType::f32;
  inf_times_empty.inputs = {Tensor(DType::f32, Shape{0}),
                            Tensor(Shape{}, std::vector<float>{std::numeric_limits<float>::infinity()})};
  Case overflow_times_empty;
  overflow_times_empty.pattern = ", , a ->";
  overflow_times_empty.dtype = DType::f64;
  overflow_times_empty.inputs = {Tensor(Shape{}, std::vector<double>{-2}), Tensor(Shape{}, std::vector<double>{0x1.8p1023}),
                                 Tensor(DType::f64, Shape{0})};
  const std::string_view empty = kEmptyContractionLabel;
  EXPECT_EQ(empty, "mismatch(special: empty-contraction)");
  EXPECT_EQ(group_signature(inf_times_empty, "torch", empty), "torch | mismatch(special: empty-contraction) | einsum");
  EXPECT_EQ(group_signature(overflow_times_empty, "torch", empty), group_signature(inf_times_empty, "torch", empty));
  // Other libraries, other ops and other verdicts stay apart.
  EXPECT_NE(group_signature(inf_times_empty, "numpy", empty), group_signature(inf_times_empty, "torch", empty));
  Case vjp = inf_times_empty;
  vjp.cotangent = Tensor(DType::f32, Shape{});
  EXPECT_EQ(group_signature(vjp, "torch", empty), "torch | mismatch(special: empty-contraction) | vjp-einsum");
  EXPECT_NE(group_signature(overflow_times_empty, "torch", "mismatch(special: NaN expected)"),
            group_signature(inf_times_empty, "torch", "mismatch(special: NaN expected)"));
}

TEST(Group, ARejectDisagreeIsKeyedByWhatTheSemanticsSaysOfTheCase) {
  const auto i32 = [](Shape shape) { return Tensor(DType::i32, std::move(shape)); };
  const auto einsum = [](std::string pattern, DType dtype, std::vector<Tensor> inputs) {
    Case c;
    c.pattern = std::move(pattern);
    c.dtype = dtype;
    c.inputs = std::move(inputs);
    return c;
  };
  // torch refuses valid int32 einsums once an axis is empty (corpus/divergences/README.md), in
  // every operand arrangement the campaign shrank it to: one group.
  const Case row = einsum("a b, a ->", DType::i32, {i32(Shape{2, 0}), i32(Shape{2})});
  const Case three = einsum("a, b, b ->", DType::i32, {i32(Shape{0}), i32(Shape{2}), i32(Shape{2})});
  EXPECT_EQ(group_signature(row, "torch", "reject-disagree"),
            "torch | reject-disagree | einsum | i32 | the semantics accepts | zero-length");
  EXPECT_EQ(group_signature(three, "torch", "reject-disagree"), group_signature(row, "torch", "reject-disagree"));
  // Another dtype, or no empty axis, is another group.
  const Case f32 = einsum("a b, a ->", DType::f32, {Tensor(DType::f32, Shape{2, 0}), Tensor(DType::f32, Shape{2})});
  const Case full = einsum("a b, a ->", DType::i32, {i32(Shape{2, 3}), i32(Shape{2})});
  EXPECT_NE(group_signature(f32, "torch", "reject-disagree"), group_signature(row, "torch", "reject-disagree"));
  EXPECT_NE(group_signature(full, "torch", "reject-disagree"), group_signature(row, "torch", "reject-disagree"));
  // numpy accepts a repeated label of unequal lengths in every dtype: one group per diagnostic code.
  const Case i64 = einsum("a a -> a", DType::i64, {Tensor(DType::i64, Shape{0, 1})});
  const Case f16 = einsum("a a -> a", DType::f16, {Tensor(DType::f16, Shape{0, 1})});
  EXPECT_EQ(group_signature(i64, "numpy", "reject-disagree"),
            "numpy | reject-disagree | einsum | the semantics rejects: repeatedEinsumDimensionMismatch");
  EXPECT_EQ(group_signature(f16, "numpy", "reject-disagree"), group_signature(i64, "numpy", "reject-disagree"));
  const Case syntax = einsum("a a -> a b", DType::i64, {Tensor(DType::i64, Shape{2, 2})});  // b: unknown
  EXPECT_NE(group_signature(syntax, "numpy", "reject-disagree"), group_signature(i64, "numpy", "reject-disagree"));
}

TEST(Group, AProdVjpMismatchWhereTheDivisionCanFailIsOneGroupPerFamily) {
  const auto prod_vjp = [](std::string pattern, auto values, Shape shape, auto g, Shape g_shape, std::int64_t b = 0) {
    using T = typename decltype(values)::value_type;
    Case c;
    c.op = Op::reduce;
    c.reduction = "prod";
    c.pattern = std::move(pattern);
    c.dtype = std::is_same_v<T, float> ? DType::f32 : DType::f64;
    c.inputs = {Tensor(std::move(shape), std::move(values))};
    c.cotangent = Tensor(std::move(g_shape), std::move(g));
    if (b != 0) c.axis_lengths = {{"b", b}};
    return c;
  };
  const double inf = std::numeric_limits<double>::infinity();
  // Four of torch's stored symptoms of g·(Π/x_p) (corpus/divergences/README.md): an infinite
  // element, an overflowing f32 product, a subnormal product, a pair whose product underflows.
  const Case inf_element = prod_vjp("a ->", std::vector<double>{1, inf}, Shape{2}, std::vector<double>{0}, Shape{});
  const Case overflow = prod_vjp("a ->", std::vector<float>{2, 0x1.fffffep+127f}, Shape{2}, std::vector<float>{0}, Shape{});
  const Case subnormal = prod_vjp("a ->", std::vector<double>{-0.25, 0x1p-1074}, Shape{2}, std::vector<double>{1}, Shape{});
  const Case pairs = prod_vjp("(a b) -> a", std::vector<double>{1, 1, -0x1.5d148c12bb2cfp-859, 0x1.dfa263407844bp-691},
                              Shape{4}, std::vector<double>{0, inf}, Shape{2}, 2);
  const std::string one =
      "torch | mismatch | vjp-reduce/prod | a fibre holds 0, inf or NaN or a sub-product that can overflow or underflow";
  EXPECT_EQ(group_signature(inf_element, "torch", "mismatch(special: non-finite result where the value is finite)"), one);
  EXPECT_EQ(group_signature(overflow, "torch", "mismatch(special: non-finite result where the value is finite)"), one);
  EXPECT_EQ(group_signature(subnormal, "torch", "mismatch(value)"), one);
  EXPECT_EQ(group_signature(pairs, "torch", "mismatch(special: +Inf expected)"), one);
  // The fibres, not the whole input: the pairs of `(a b) -> a` each have a normal product, while
  // the product of all four elements is not; and a zero is enough.
  const Case normal_pairs = prod_vjp("(a b) -> a", std::vector<double>{0x1p-600, 0x1p50, 0x1p-600, 0x1p50},
                                     Shape{4}, std::vector<double>{1, 1}, Shape{2}, 2);
  EXPECT_NE(group_signature(normal_pairs, "torch", "mismatch(value)"), one);
  const Case whole = prod_vjp("a b ->", std::vector<double>{0x1p-600, 0x1p50, 0x1p-600, 0x1p50},
                              Shape{2, 2}, std::vector<double>{1}, Shape{});
  EXPECT_EQ(group_signature(whole, "torch", "mismatch(value)"), one);
  const Case zero = prod_vjp("a ->", std::vector<double>{2, 0}, Shape{2}, std::vector<double>{1}, Shape{});
  EXPECT_EQ(group_signature(zero, "torch", "mismatch(value)"), one);
  // A normal product whose sub-product can underflow: 2^-600 · 2^-600 first is 0.
  const Case sub_product = prod_vjp("a ->", std::vector<double>{0x1p-600, 0x1p-600, 0x1p1000}, Shape{3},
                                    std::vector<double>{1}, Shape{});
  EXPECT_EQ(group_signature(sub_product, "torch", "mismatch(value)"), one);
  // Near the edges the (1+u)^n of ORACLE §5's prod row decides: Ω itself is not certified, Ω/2 is.
  const Case at_max = prod_vjp("a ->", std::vector<float>{0x1.fffffep+127f, 1}, Shape{2}, std::vector<float>{1}, Shape{});
  EXPECT_EQ(group_signature(at_max, "torch", "mismatch(value)"), one);
  const Case below_max = prod_vjp("a ->", std::vector<float>{0x1.fffffep+126f, 1}, Shape{2}, std::vector<float>{1}, Shape{});
  EXPECT_NE(group_signature(below_max, "torch", "mismatch(value)"), one);
  const Case at_min = prod_vjp("a ->", std::vector<float>{0x1p-126f, 1}, Shape{2}, std::vector<float>{1}, Shape{});
  EXPECT_EQ(group_signature(at_min, "torch", "mismatch(value)"), one);
  const Case above_min = prod_vjp("a ->", std::vector<float>{0x1p-125f, 1}, Shape{2}, std::vector<float>{1}, Shape{});
  EXPECT_NE(group_signature(above_min, "torch", "mismatch(value)"), one);
  // Where every fibre is certified the division cannot fail (its n + 1 roundings are inside ORACLE
  // §7's γ_{n+1}): a mismatch there is another cause, keyed in full.
  const Case normal = prod_vjp("a ->", std::vector<double>{0.5, 3}, Shape{2}, std::vector<double>{1}, Shape{});
  EXPECT_EQ(group_signature(normal, "torch", "mismatch(value)"),
            "torch | mismatch(value) | vjp-reduce/prod | f64 | a -> | (n) | none | cotangent none");
  // Other families, verdict kinds, reductions and the forward prod stay apart.
  EXPECT_NE(group_signature(subnormal, "jax", "mismatch(value)"), one);
  EXPECT_NE(group_signature(subnormal, "torch", "crash"), one);
  Case sum = subnormal;
  sum.reduction = "sum";
  EXPECT_NE(group_signature(sum, "torch", "mismatch(value)"), one);
  Case forward = subnormal;
  forward.cotangent.reset();
  EXPECT_NE(group_signature(forward, "torch", "mismatch(value)"), one);
}

TEST(Group, ASignaturesKindIsItsFamilyVerdictOpAndDtype) {
  EXPECT_EQ(signature_kind("xtensor | mismatch(special: NaN expected) | reduce/min | f64 | a -> | (n) | nan"),
            "xtensor | mismatch(special: NaN expected) | reduce/min | f64");
  EXPECT_EQ(signature_kind("torch | mismatch(value) | vjp-reduce/prod | f32 | a -> | (n) | none | cotangent none"),
            "torch | mismatch(value) | vjp-reduce/prod | f32");
  EXPECT_EQ(signature_kind("a | b | c"), "a | b | c");
}

TEST(Campaign, EveryFailureBelongsToAGroupOrIsCountedAndNoTwoGroupsShareASignature) {
  // Far more than 10 failures per backend x verdict: each is attributed, none is silently dropped.
  auto r = run_campaign(counted(3000, 3), planted(test::PlantedBug::seeded_accumulator));
  ASSERT_TRUE(r.ok());
  ASSERT_GT(r->failures, 30u);
  std::uint64_t attributed = 0;
  std::set<std::string> signatures;
  for (const Finding& f : r->findings) {
    attributed += f.count;
    EXPECT_TRUE(signatures.insert(f.signature).second) << f.signature;
    EXPECT_EQ(f.signature, group_signature(f.shrunk, f.family, f.verdict));
    EXPECT_EQ(f.backends, std::vector<std::string>{f.backend});
  }
  EXPECT_EQ(attributed + r->unshrunk + r->unconfirmed, r->failures);
  EXPECT_EQ(r->new_groups(), r->findings.size());
}

TEST(Campaign, TwoTorchVariantsReproducingOneCauseAreOneGroupListingBoth) {
  if (torch_backend_names().size() < 2) GTEST_SKIP() << torch_unavailable_reason();
  const BackendFactory factory = []() -> Result<std::vector<std::unique_ptr<Backend>>> {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(make_builtin_backend("torch", {}));
    out.push_back(make_builtin_backend("torch-path-right", {}));
    return out;
  };
  CampaignOptions o = counted(400, 1);  // seed 1: int32 `a ->` on a length-0 axis within the first cases
  auto r = run_campaign(o, factory);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->findings.empty());
  bool both = false;
  std::set<std::string> signatures;
  for (const Finding& f : r->findings) {
    EXPECT_EQ(f.family, "torch");
    EXPECT_TRUE(signatures.insert(f.signature).second) << "two groups with one signature: " << f.signature;
    both |= f.backends == std::vector<std::string>{"torch", "torch-path-right"};
  }
  EXPECT_TRUE(both) << "no group lists both variants";
}

/// Rewrites a stored finding as a stored divergence (origin.library added), as the README asks.
void mark_as_divergence(const fs::path& file) {
  auto c = read_case_file(file);
  ASSERT_TRUE(c.ok());
  c->origin.emplace_back("library", "planted 1.0");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << write_case(*c);
}

TEST(Campaign, AStoredDivergenceIsKnownAndANewGroupIsNot) {
  const fs::path dir = group_dir("known");
  CampaignOptions o = counted(300, 5);
  o.store = true;
  o.corpus = dir / "found";
  auto first = run_campaign(o, planted(test::PlantedBug::seeded_accumulator));
  ASSERT_TRUE(first.ok());
  ASSERT_GE(first->findings.size(), 2u);
  EXPECT_EQ(first->new_groups(), first->findings.size());
  // Every group stored: the same campaign against them finds nothing new.
  o.store = false;
  o.known = {o.corpus};
  auto again = run_campaign(o, planted(test::PlantedBug::seeded_accumulator));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->findings.size(), first->findings.size());
  EXPECT_EQ(again->new_groups(), 0u);
  for (const Finding& f : again->findings) {
    EXPECT_TRUE(f.known);
    EXPECT_EQ(f.known_file.parent_path(), o.corpus);
    EXPECT_EQ(f.file, f.known_file);
    EXPECT_NE(f.reproduce.find(f.known_file.string()), std::string::npos) << f.reproduce;
  }
  // One stored divergence removed: exactly its group is new again. A stored divergence of its kind
  // (family, verdict, op, dtype) in another pattern stays beside it: the new group names that file,
  // known groups name none.
  const Finding& victim = first->findings.front();
  const fs::path removed = victim.file;
  ASSERT_EQ(victim.shrunk.pattern, ", ->");  // seed 5's first group: a product of two scalars
  Case sibling = victim.shrunk;
  sibling.pattern = "a, -> a";
  sibling.inputs[0] = Tensor(sibling.dtype, Shape{1});
  const fs::path sibling_file = o.corpus / "sibling.case.json";
  ASSERT_EQ(signature_kind(group_signature(sibling, victim.family, victim.verdict)), signature_kind(victim.signature));
  std::ofstream(sibling_file, std::ios::binary) << write_case(sibling);
  fs::remove(removed);
  auto one_new = run_campaign(o, planted(test::PlantedBug::seeded_accumulator));
  ASSERT_TRUE(one_new.ok());
  ASSERT_EQ(one_new->new_groups(), 1u);
  for (const Finding& f : one_new->findings) EXPECT_EQ(f.known, f.signature != victim.signature);
  std::ostringstream summary;
  write_campaign_summary(*one_new, o, summary);
  for (const Finding& f : one_new->findings) {
    if (f.known) {
      EXPECT_TRUE(f.resembles.empty()) << f.signature;
      continue;
    }
    EXPECT_EQ(f.resembles, std::vector<fs::path>{sibling_file});
    EXPECT_NE(summary.str().find("    stored divergences of its library, verdict, op and dtype: " + sibling_file.string() + "\n"),
              std::string::npos)
        << summary.str();
  }
  const std::string json = campaign_report_json(*one_new, o);
  EXPECT_NE(json.find("\"groups\": ["), std::string::npos);
  EXPECT_NE(json.find("\"known\": false"), std::string::npos);
  EXPECT_NE(json.find("\"signature\": \"" + victim.signature + "\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"resembles\": [\n        \"" + sibling_file.string() + "\""), std::string::npos) << json;
  // The HTML report's new group carries the same hint, and a known group none.
  const std::string html = campaign_report_html(*one_new, o);
  const std::string hint = "stored divergences of its library, verdict, op and dtype";
  EXPECT_EQ(html.find(hint), html.rfind(hint)) << html;
  const std::size_t hint_at = html.find(hint);
  ASSERT_NE(hint_at, std::string::npos) << html;
  EXPECT_NE(html.find(sibling_file.string(), hint_at), std::string::npos) << html;
  const std::size_t group_at = html.rfind("<div class=\"group", hint_at);  // the group that holds the hint
  ASSERT_NE(group_at, std::string::npos) << html;
  EXPECT_EQ(html.find("<span class=\"tag\">", group_at), html.find("<span class=\"tag\">new</span>", group_at)) << html;
  const auto report = dir / "report.json";
  std::ofstream(report) << json;
  auto merged = merge_campaign_reports({report}, false);
  ASSERT_TRUE(merged.ok()) << render(merged.error());
  for (const Finding& f : merged->result.findings) EXPECT_EQ(f.resembles.empty(), f.known) << f.signature;
  const std::string junit = campaign_report_junit(*one_new);
  EXPECT_EQ(junit.find("<failure"), junit.rfind("<failure"));  // one failing testcase: the new group
  EXPECT_NE(junit.find("tests=\"" + std::to_string(one_new->findings.size()) + "\""), std::string::npos) << junit;
  fs::remove_all(dir);
}

TEST(Replay, AStoredDivergenceIsAStrictExpectedFailure) {
  const fs::path dir = group_dir("replay");
  CampaignOptions o = counted(300, 5);
  o.store = true;
  o.corpus = dir;
  o.max_findings = 1;
  auto r = run_campaign(o, planted(test::PlantedBug::seeded_accumulator));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->findings.size(), 1u);
  const fs::path file = r->findings.front().file;
  auto bug = test::make_planted_bug_backend(test::PlantedBug::seeded_accumulator);
  auto fused = make_fused_backend({});
  Backend* both[] = {bug.get(), fused.get()};
  const std::vector<fs::path> files = {file};
  // A finding (no `library`): it fails where it was found, as before.
  EXPECT_EQ(replay_cases(files, both, {}).failed, 1u);
  // A stored divergence that reproduces: passes, marked known; fused must still pass it.
  mark_as_divergence(file);
  ReplayResult ok = replay_cases(files, both, {});
  EXPECT_EQ(ok.failed, 0u);
  ASSERT_EQ(ok.entries.at(0).known, (std::vector<bool>{true, false}));
  // Its library was "fixed": the recorded verdict is no longer what the backend gives.
  auto c = read_case_file(file);
  ASSERT_TRUE(c.ok());
  for (auto& [k, v] : c->origin)
    if (k == "verdict") v = "mismatch(shape)";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << write_case(*c);
  const ReplayResult stale = replay_cases(files, both, {});
  EXPECT_EQ(stale.failed, 1u);
  ASSERT_EQ(stale.entries.at(0).stale.size(), 1u);
  EXPECT_NE(stale.entries[0].stale[0].find("no longer reproduces"), std::string::npos);
  std::ostringstream table;
  write_replay_table(stale, table);
  EXPECT_NE(table.str().find("FAIL " + file.string()), std::string::npos) << table.str();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace einfuzz
