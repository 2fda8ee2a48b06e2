// Reproduction (issue 10, items 11 and 12) in process: shuffle's choices depend on its seed and the
// case alone, the reproduce command builder spells every non-default verdict-deciding option, and a
// campaign stores a finding only when its shrunk case fails again the same way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/merge.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "planted_bugs.hpp"

namespace einfuzz {
namespace {

// ---------------------------------------------------------------------------------------------
// shuffle: (seed, case content) → choices

/// A sum whose rounding depends on the order of its terms.
Case order_sensitive_sum(std::uint64_t salt) {
  Case c;
  c.pattern = "i ->";
  c.dtype = DType::f64;
  std::vector<double> v;
  Rng rng(salt);
  for (int k = 0; k < 64; ++k) v.push_back(std::ldexp(static_cast<double>(rng.between(-1000, 1000)), rng.between(-40, 40)));
  c.inputs = {Tensor(Shape{64}, std::move(v))};
  return c;
}

bool same_bits(const BackendResult& a, const BackendResult& b) {
  const auto* x = std::get_if<Tensor>(&a);
  const auto* y = std::get_if<Tensor>(&b);
  if (!x || !y || x->shape() != y->shape()) return false;
  const auto p = x->bytes(), q = y->bytes();
  return p.size() == q.size() && std::memcmp(p.data(), q.data(), p.size()) == 0;
}

TEST(ShuffleReproduction, ACaseGetsTheSameResultFirstOrAfterAHundredOtherCases) {
  std::vector<Case> others;
  for (std::uint64_t i = 0; i < 100; ++i) {
    SeededChoices choices(Rng::mix(3, i));
    others.push_back(generate_case(choices, campaign_gen_options()));
  }
  for (std::uint64_t salt = 0; salt < 5; ++salt) {
    const Case c = order_sensitive_sum(salt);
    auto first = make_shuffle_backend(7);
    const BackendResult alone = first->run(c);
    auto later = make_shuffle_backend(7);
    for (const Case& o : others) (void)later->run(o);
    EXPECT_TRUE(same_bits(alone, later->run(c))) << "salt " << salt;
    EXPECT_TRUE(same_bits(alone, later->run(c))) << "salt " << salt << ", twice in a row";
  }
}

TEST(ShuffleReproduction, DifferentSeedsChooseDifferently) {
  int differ = 0;
  for (std::uint64_t salt = 0; salt < 20; ++salt) {
    const Case c = order_sensitive_sum(salt);
    differ += !same_bits(make_shuffle_backend(1)->run(c), make_shuffle_backend(2)->run(c));
  }
  EXPECT_GE(differ, 5);  // an order-sensitive sum rounds differently along most other orders
}

TEST(ShuffleReproduction, EveryPartOfTheCaseFeedsTheChoices) {
  // The same values under another pattern spelling (same meaning) are another case: another stream.
  int differ = 0;
  for (std::uint64_t salt = 0; salt < 20; ++salt) {
    const Case c = order_sensitive_sum(salt);
    Case renamed = c;
    renamed.pattern = "j ->";
    differ += !same_bits(make_shuffle_backend(1)->run(c), make_shuffle_backend(1)->run(renamed));
  }
  EXPECT_GE(differ, 5);
}

// ---------------------------------------------------------------------------------------------
// The reproduce command builder

TEST(ReproduceCommand, DefaultsAddNothing) {
  EXPECT_TRUE(verdict_option_args({}, {}).empty());
  EXPECT_EQ(reproduce_command(std::string("x.case.json"), {}), "build/einfuzz check --case 'x.case.json'");
}

TEST(ReproduceCommand, SpellsEveryNonDefaultVerdictDecidingOption) {
  RunOptions run;
  BackendSpecOptions spec;
  run.exec.threads = 3;
  run.exec.tile_width = 4;
  run.exec.tasks = 5;
  run.judge.strict_nan_payload = true;
  run.strict_signed_zero = true;
  run.shuffle_seed = 99;
  run.limits.max_operands = 7;
  run.limits.max_labels = 8;
  run.limits.max_tensor_elements = 1000;
  run.limits.max_materialised_elements = 2000;
  spec.timeout_seconds = 0.1;
  spec.isolate = true;
  run.profile = PrecisionProfile{DType::f32, InputRounding::tf32};
  const std::vector<std::string> want = {"--threads", "3", "--tile", "4", "--tasks", "5", "--strict-nan-payload",
                                         "--strict-signed-zero", "--shuffle-seed", "99", "--max-operands", "7",
                                         "--max-labels", "8", "--max-tensor-elements", "1000",
                                         "--max-materialised-elements", "2000", "--timeout", "0.1", "--isolate",
                                         "--profile", "f32+tf32"};
  EXPECT_EQ(verdict_option_args(run, spec), want);
}

TEST(ReproduceCommand, FlagFormAndBackends) {
  ReproduceContext context;
  context.backends = {"fused", "cmd:python3 b.py --x 1,2", "shuffle", "plugin:/p/lib.so"};
  context.run.shuffle_seed = 4;
  const CaseFlags flags{"->", std::nullopt, {}, "()", "f32", "edge", 9, false, std::nullopt, std::nullopt};
  EXPECT_EQ(reproduce_command(flags, context),
            "build/einfuzz check --shapes '()' --dtype 'f32' --values 'edge' --seed 9 --backend 'fused' "
            "--backend 'cmd:python3 b.py --x 1,2' --backend 'shuffle,plugin:/p/lib.so' --shuffle-seed 4 -- '->'");
  const CaseFlags reduce{"(a b) c -> a c", std::string("sum"), {"b=2"}, "4x3", "f64", "random", 1, false, std::nullopt, std::nullopt};
  EXPECT_EQ(reproduce_command(reduce, {}),
            "build/einfuzz check --reduce 'sum' --axis 'b=2' --shapes '4x3' --dtype 'f64' --values 'random' "
            "--seed 1 -- '(a b) c -> a c'");
}

TEST(ReproduceCommand, AllExpandsToTheBuiltinNames) {
  const std::vector<std::string> specs = {"all", "plugin:/x.so"};
  std::vector<std::string> want = builtin_backend_names();
  want.push_back("plugin:/x.so");
  EXPECT_EQ(expand_backend_specs(specs), want);
}

// ---------------------------------------------------------------------------------------------
// The campaign: findings name their spec and options; a finding must fail again

std::filesystem::path fresh_reproduce_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("einfuzz-reproduce-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CampaignReproduction, FindingsNameTheBackendSpecAndCarryTheOptions) {
  CampaignOptions o;
  o.cases = 200;
  o.seed = 5;
  o.store = false;
  o.run.shuffle_seed = 12;
  o.run.exec.tasks = 2;
  o.backend_options.timeout_seconds = 4;
  o.backend_specs = {"plugin:/abs/libplanted.so"};
  const auto planted = [] {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(test::make_planted_bug_backend(test::PlantedBug::seeded_accumulator));
    return Result<std::vector<std::unique_ptr<Backend>>>(std::move(out));
  };
  auto r = run_campaign(o, planted);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->findings.empty());
  // Not stored: the command reruns the campaign case alone (case i of seed 5), with the options.
  for (const Finding& f : r->findings) {
    const std::string i = std::to_string(f.case_index);
    const std::string n = std::to_string(f.case_index + 1);
    EXPECT_EQ(f.reproduce, "build/einfuzz fuzz --backend 'plugin:/abs/libplanted.so' --seed 5 --cases " + n +
                               " --shard " + i + "/" + n + " --tasks 2 --shuffle-seed 12 --timeout 4 --no-store");
  }
  // Stored: `check` on the file it wrote.
  o.store = true;
  o.corpus = fresh_reproduce_dir("spec");
  auto stored = run_campaign(o, planted);
  ASSERT_TRUE(stored.ok());
  ASSERT_FALSE(stored->findings.empty());
  for (const Finding& f : stored->findings) {
    EXPECT_TRUE(std::filesystem::exists(f.file)) << f.file;
    EXPECT_EQ(f.reproduce, "build/einfuzz check --case '" + f.file.string() +
                               "' --backend 'plugin:/abs/libplanted.so' --tasks 2 --shuffle-seed 12 --timeout 4");
  }
  std::filesystem::remove_all(o.corpus);
}

/// Fails (a wrong value) the first time it sees a case, answers `unsupported` ever after: a flaky
/// backend whose shrunk case no longer fails when it is re-run.
class FailsOncePerCase final : public Backend {
 public:
  FailsOncePerCase() {
    caps_.ops = {Op::einsum, Op::reduce};
    caps_.dtypes = {DType::f32, DType::f64, DType::i32, DType::i64, DType::boolean};
    caps_.reductions = {"sum", "prod", "mean", "min", "max", "any", "all"};
    caps_.semantics = Semantics::ordered;
    caps_.nan_profile = NanProfile::ordered;
  }
  std::string_view name() const override { return "fails-once"; }
  const Capabilities& capabilities() const override { return caps_; }
  BackendResult run(const Case& c) override {
    if (!seen_.insert(write_case(c)).second) return Unsupported{"seen before"};
    return Tensor(DType::f64, Shape{7});  // never the reference's shape: mismatch(shape)
  }

 private:
  Capabilities caps_;
  std::set<std::string> seen_;
};

TEST(CampaignReproduction, AShrunkCaseThatNoLongerFailsIsNotAFinding) {
  const auto dir = fresh_reproduce_dir("flaky");
  CampaignOptions o;
  o.cases = 30;
  o.seed = 2;
  o.corpus = dir;
  o.shrink_limit = 1000;
  o.gen.invalid_percent = 0;
  auto r = run_campaign(o, [] {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(std::make_unique<FailsOncePerCase>());
    return Result<std::vector<std::unique_ptr<Backend>>>(std::move(out));
  });
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->failures, 0u);
  EXPECT_TRUE(r->findings.empty()) << r->findings.front().verdict;
  EXPECT_EQ(r->unconfirmed, r->failures);
  EXPECT_FALSE(std::filesystem::exists(dir)) << "nothing may be stored";
  std::ostringstream summary;
  write_campaign_summary(*r, o, summary);
  // The summary and the report name the backend that did not fail again, and a merge keeps it.
  const std::string n = std::to_string(r->failures);
  EXPECT_EQ(r->unconfirmed_by_backend, (std::map<std::string, std::uint64_t>{{"fails-once", r->failures}}));
  EXPECT_NE(summary.str().find(" (fails-once " + n + ") did not fail again"), std::string::npos) << summary.str();
  const std::string json = campaign_report_json(*r, o);
  EXPECT_NE(json.find("\"unconfirmed_failures\": " + n), std::string::npos);
  EXPECT_NE(json.find("\"unconfirmed_by_backend\": {\n    \"fails-once\": " + n + "\n  }"), std::string::npos) << json;
  const auto report = dir.parent_path() / (dir.filename().string() + "-report.json");
  std::ofstream(report) << json;
  auto merged = merge_campaign_reports({report, report}, false);  // a shard twice is refused
  EXPECT_FALSE(merged.ok());
  merged = merge_campaign_reports({report}, false);
  ASSERT_TRUE(merged.ok()) << render(merged.error());
  EXPECT_EQ(merged->result.unconfirmed_by_backend, r->unconfirmed_by_backend);
  std::filesystem::remove(report);
  std::filesystem::remove_all(dir);
}

// A 25-minute campaign (seed 20261206) counted 10,003,981 passes for shuffle: the summary printed
// them against the next column, "100039814525952". Every count stays apart from the next one.
TEST(CampaignSummary, ColumnsStayApartWhenACountIsWiderThanItsName) {
  CampaignResult r;
  r.backends = {"fused", "shuffle"};
  r.counts.resize(2);
  r.counts[0][static_cast<std::size_t>(VerdictKind::pass)] = 1616706;
  r.counts[0][static_cast<std::size_t>(VerdictKind::pass_bitwise)] = 15041666;
  r.counts[1][static_cast<std::size_t>(VerdictKind::pass)] = 10003981;
  r.counts[1][static_cast<std::size_t>(VerdictKind::pass_bitwise)] = 4525952;
  r.counts[1][static_cast<std::size_t>(VerdictKind::indeterminate)] = 123456789012;
  std::ostringstream summary;
  write_campaign_summary(r, CampaignOptions{}, summary);
  std::istringstream lines(summary.str());
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string w; words >> w;) row.push_back(w);
    if (!row.empty() && (row[0] == "backend" || row[0] == "fused" || row[0] == "shuffle")) rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), 3u) << summary.str();
  EXPECT_EQ(rows[0], (std::vector<std::string>{"backend", "pass", "pass(bitwise)", "indeterminate", "groups"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"fused", "1616706", "15041666", "0", "0"})) << summary.str();
  EXPECT_EQ(rows[2], (std::vector<std::string>{"shuffle", "10003981", "4525952", "123456789012", "0"})) << summary.str();
}

}  // namespace
}  // namespace einfuzz
