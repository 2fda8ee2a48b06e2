// Sharded campaigns and `einfuzz merge` (issue 16): shards are disjoint and cover the unsharded
// cases, three shards merged equal one unsharded run, merge refuses what does not belong together
// and gathers case files without overwriting, and the progress line counts the groups so far.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/merge.hpp"
#include "planted_bugs.hpp"
#include "support/planted_campaign.hpp"

namespace einfuzz {
namespace {

using test::counted;

BackendFactory fused_and_dropped_term() {
  return []() -> Result<std::vector<std::unique_ptr<Backend>>> {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(make_fused_backend({}));
    out.push_back(test::make_planted_bug_backend(test::PlantedBug::dropped_term));
    return out;
  };
}

/// fused and xtensor: xtensor's min/max divergences (corpus/divergences) give several groups whose
/// shrunk case depends on which case of a pre-shrink signature is met first.
BackendFactory fused_and_xtensor() {
  return [] {
    const std::vector<std::string> specs = {"fused", "xtensor"};
    return make_backends(specs, {}, {});
  };
}

std::filesystem::path fresh_shard_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("einfuzz-shard-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CampaignOptions shard_of(CampaignOptions o, std::uint64_t k, std::uint64_t n) {
  o.shard = k;
  o.shards = n;
  return o;
}

TEST(Shard, CaseCountsOfTheShardsAddUpToTheCases) {
  for (std::uint64_t cases : {1u, 2u, 3u, 10u, 11u, 400u}) {
    for (std::uint64_t n : {1u, 2u, 3u, 7u, 500u}) {
      std::uint64_t total = 0;
      for (std::uint64_t k = 0; k < n; ++k) {
        std::uint64_t direct = 0;
        for (std::uint64_t i = 0; i < cases; ++i) direct += i % n == k;
        EXPECT_EQ(shard_case_count(cases, k, n), direct) << cases << " cases, shard " << k << "/" << n;
        total += shard_case_count(cases, k, n);
      }
      EXPECT_EQ(total, cases);
    }
  }
}

TEST(Shard, ShardsAreDisjointCoverTheCasesAndRunTheSameCases) {
  constexpr std::uint64_t kCases = 150;
  CampaignOptions o = counted(kCases, 31);
  o.record_verdicts = true;
  auto whole = run_campaign(o, fused_and_dropped_term());
  ASSERT_TRUE(whole.ok()) << render(whole.error());
  ASSERT_EQ(whole->records.size(), kCases);
  std::map<std::uint64_t, const CaseRecord*> seen;
  std::vector<CampaignResult> shards;
  for (std::uint64_t k = 0; k < 3; ++k) {
    CampaignOptions s = shard_of(o, k, 3);
    s.jobs = k == 1 ? 2 : 1;  // --jobs splits the shard's cases among its workers
    auto r = run_campaign(s, fused_and_dropped_term());
    ASSERT_TRUE(r.ok()) << render(r.error());
    EXPECT_EQ(r->cases, shard_case_count(kCases, k, 3));
    shards.push_back(std::move(*r));
  }
  for (std::uint64_t k = 0; k < 3; ++k) {
    for (const CaseRecord& rec : shards[k].records) {
      EXPECT_EQ(rec.index % 3, k) << "shard " << k << " ran case " << rec.index;
      EXPECT_TRUE(seen.emplace(rec.index, &rec).second) << "case " << rec.index << " ran twice";
    }
  }
  ASSERT_EQ(seen.size(), kCases);
  for (const CaseRecord& rec : whole->records) {
    ASSERT_TRUE(seen.count(rec.index)) << "case " << rec.index << " ran in no shard";
    // Case i is the same case, with the same verdicts, sharded or not.
    EXPECT_EQ(seen[rec.index]->name, rec.name) << "case " << rec.index;
    EXPECT_EQ(seen[rec.index]->labels, rec.labels) << "case " << rec.index;
  }
}

TEST(Shard, WithATimeBudgetAShardRunsOnlyItsOwnCases) {
  CampaignOptions o;
  o.seconds = 0.2;
  o.store = false;
  o.progress_interval = 3600;
  o.record_verdicts = true;
  auto r = run_campaign(shard_of(o, 3, 5), fused_and_dropped_term());
  ASSERT_TRUE(r.ok()) << render(r.error());
  ASSERT_FALSE(r->records.empty());
  // Cases 3, 8, 13, … from the start, none skipped (one job; how many depends on the machine).
  for (std::size_t k = 0; k < r->records.size(); ++k) EXPECT_EQ(r->records[k].index, 3 + 5 * k);
}

TEST(Shard, ABadShardIsADiagnostic) {
  for (auto [k, n] : {std::pair<std::uint64_t, std::uint64_t>{3, 3}, {0, 0}, {5, 2}}) {
    auto r = run_campaign(shard_of(counted(5, 1), k, n), fused_and_dropped_term());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("--shard"), std::string::npos) << r.error().message;
  }
}

class MergeShards : public ::testing::TestWithParam<int> {};

TEST_P(MergeShards, ThreeShardsMergedGiveTheGroupsAndCountsOfOneUnshardedRun) {
  const auto dir = fresh_shard_dir("merge");
  // 0: a planted bug next to fused; 1: xtensor's reduce divergences, where a shard's first failure
  // of a pre-shrink signature shrinks to another group than the unsharded run's first one.
  CampaignOptions o = GetParam() == 0 ? counted(400, 77) : counted(300, 4);
  if (GetParam() == 1) o.gen.reduce_percent = 100;
  const BackendFactory factory = GetParam() == 0 ? fused_and_dropped_term() : fused_and_xtensor();
  auto whole = run_campaign(o, factory);
  ASSERT_TRUE(whole.ok()) << render(whole.error());
  ASSERT_FALSE(whole->findings.empty());
  std::vector<std::filesystem::path> reports;
  for (std::uint64_t k = 0; k < 3; ++k) {
    const CampaignOptions s = shard_of(o, k, 3);
    auto r = run_campaign(s, factory);
    ASSERT_TRUE(r.ok()) << render(r.error());
    reports.push_back(dir / ("shard-" + std::to_string(k) + ".json"));
    write(reports.back(), campaign_report_json(*r, s));
  }
  auto merged = merge_campaign_reports(reports, false);
  ASSERT_TRUE(merged.ok()) << render(merged.error());
  const CampaignResult& m = merged->result;
  EXPECT_EQ(m.backends, whole->backends);
  EXPECT_EQ(m.cases, whole->cases);
  EXPECT_EQ(m.failures, whole->failures);
  EXPECT_EQ(m.counts, whole->counts);
  std::map<std::string, std::uint64_t> want, got;
  std::map<std::string, std::set<std::string>> want_backends, got_backends;
  for (const Finding& f : whole->findings) {
    want[f.signature] = f.count;
    want_backends[f.signature] = {f.backends.begin(), f.backends.end()};
  }
  for (const Finding& f : m.findings) {
    EXPECT_TRUE(got.emplace(f.signature, f.count).second) << "group twice: " << f.signature;
    got_backends[f.signature] = {f.backends.begin(), f.backends.end()};
  }
  EXPECT_EQ(got, want);  // the same groups, each with the same failure count
  EXPECT_EQ(got_backends, want_backends);
  EXPECT_TRUE(merged->missing_shards.empty());
  EXPECT_EQ(m.found_new(), whole->found_new());
  // The merged report is itself a report: merged alone it gives the same again.
  write(dir / "merged.json", merged_report_json(*merged));
  auto again = merge_campaign_reports({dir / "merged.json"}, false);
  ASSERT_TRUE(again.ok()) << render(again.error());
  EXPECT_EQ(again->result.counts, m.counts);
  EXPECT_EQ(again->result.findings.size(), m.findings.size());
  // Two of three shards: the third is named as missing.
  auto part = merge_campaign_reports({reports[0], reports[2]}, false);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->missing_shards, std::vector<std::uint64_t>{1});
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(PlantedAndXtensor, MergeShards, ::testing::Values(0, 1));

TEST(Merge, RefusesWhatIsNotAReportOrDoesNotBelongTogether) {
  const auto dir = fresh_shard_dir("refuse");
  auto run = [&](const CampaignOptions& s, const std::string& name) {
    auto r = run_campaign(s, fused_and_dropped_term());
    EXPECT_TRUE(r.ok());
    write(dir / name, campaign_report_json(*r, s));
    return dir / name;
  };
  const auto a = run(shard_of(counted(20, 5), 0, 2), "a.json");
  const auto b = run(shard_of(counted(20, 6), 1, 2), "b.json");  // another seed
  const auto c = run(shard_of(counted(20, 5), 1, 3), "c.json");  // another shard count
  write(dir / "x.json", "{\"format\": \"something-else/1\"}");
  write(dir / "y.json", "not json");
  const auto refused = [&](std::vector<std::filesystem::path> files, const std::string& needle) {
    auto r = merge_campaign_reports(files, false);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  refused({a, b}, "another seed");
  refused({a, c}, "another shard count");
  refused({a, a}, "counted twice");
  refused({a, dir / "x.json"}, "x.json' is not a campaign report");
  refused({dir / "y.json"}, "y.json' is not a campaign report");
  refused({dir / "none.json"}, "none.json");
  EXPECT_TRUE(merge_campaign_reports({a, b, c}, true).ok());
  std::filesystem::remove_all(dir);
}

TEST(Merge, CopiesEachNewGroupsCaseFileOnceNeverOverwriting) {
  const auto dir = fresh_shard_dir("corpus");
  std::vector<std::filesystem::path> reports;
  for (std::uint64_t k = 0; k < 2; ++k) {
    CampaignOptions s = shard_of(counted(300, 77), k, 2);
    s.store = true;
    s.corpus = dir / ("found-" + std::to_string(k));
    auto r = run_campaign(s, fused_and_dropped_term());
    ASSERT_TRUE(r.ok());
    reports.push_back(dir / ("r" + std::to_string(k) + ".json"));
    write(reports.back(), campaign_report_json(*r, s));
  }
  auto merged = merge_campaign_reports(reports, false);
  ASSERT_TRUE(merged.ok());
  ASSERT_FALSE(merged->result.findings.empty());
  // One file of the target corpus already exists with other bytes: it stays.
  const Finding& first = merged->result.findings.front();
  std::filesystem::create_directories(dir / "all");
  write(dir / "all" / first.file.filename(), "older");
  std::vector<std::string> messages;
  EXPECT_TRUE(copy_group_case_files(*merged, dir / "all", messages));
  EXPECT_EQ(read(dir / "all" / first.file.filename()), "older");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("not overwritten"), std::string::npos) << messages[0];
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "all")) files += e.is_regular_file();
  EXPECT_EQ(files, merged->result.findings.size());
  for (const Finding& f : merged->result.findings) {
    EXPECT_EQ(f.file.parent_path(), dir / "all");
    EXPECT_NE(f.reproduce.find(f.file.string()), std::string::npos) << f.reproduce;
  }
  // A case file that is gone: said, and the corpus is incomplete.
  auto again = merge_campaign_reports(reports, false);
  ASSERT_TRUE(again.ok());
  std::filesystem::remove_all(dir / "found-0");
  std::filesystem::remove_all(dir / "found-1");
  messages.clear();
  EXPECT_FALSE(copy_group_case_files(*again, dir / "other", messages));
  EXPECT_FALSE(messages.empty());
  std::filesystem::remove_all(dir);
}

TEST(Progress, TheLineCountsTheGroupsFoundSoFar) {
  CampaignOptions o = counted(300, 77);
  std::ostringstream out;
  auto r = run_campaign(o, fused_and_dropped_term(), {&out, false, 0});
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->findings.empty());
  // The last line is the final progress line.
  std::string text = out.str(), last;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("fuzz ", 0) == 0) last = line;
  }
  const std::size_t n = r->findings.size();
  const std::string want = " | " + std::to_string(n) + (n == 1 ? " group" : " groups") + " (" +
                           std::to_string(r->new_groups()) + " new, " + std::to_string(n - r->new_groups()) + " known)";
  EXPECT_NE(last.find(want), std::string::npos) << last;
  EXPECT_NE(last.find(" | 0 cases left"), std::string::npos) << last;
  // A shard counts down its own cases.
  std::ostringstream shard_out;
  auto s = run_campaign(shard_of(counted(10, 77), 1, 4), fused_and_dropped_term(), {&shard_out, false, 0});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->cases, 3u);  // cases 1, 5, 9
  EXPECT_NE(shard_out.str().find(" 3 cases "), std::string::npos) << shard_out.str();
}

}  // namespace
}  // namespace einfuzz
