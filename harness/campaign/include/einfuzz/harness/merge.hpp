// `einfuzz merge`: campaign JSON reports (one per shard, docs/scale.md) merged into one campaign
// result, so the summary, JSON and JUnit writers of a single campaign print the merged one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/harness/campaign.hpp"

namespace einfuzz {

/// One report's shard, as its JSON records it ({0, 1} for an unsharded campaign).
struct ShardId {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  friend bool operator==(const ShardId&, const ShardId&) = default;
};

struct MergedCampaign {
  /// Totals and per-backend verdict counts added (by backend name), groups deduplicated by signature.
  CampaignResult result;
  /// seed and generator of the reports; jobs = their sum; shards = 1 (the merge is not one shard).
  CampaignOptions options;
  std::vector<std::filesystem::path> reports;  ///< the merged files, in order
  std::vector<ShardId> shards;                 ///< per report
  /// The shards of N that no report covers, when every report is one shard of the same N.
  std::vector<std::uint64_t> missing_shards;
  /// Per group (parallel to result.findings), the directory of the report it was taken from:
  /// copy_group_case_files looks up relative case file names below it.
  std::vector<std::filesystem::path> report_dirs;
};

/// Reads and merges `reports`. Counts, failures and cases are added, `seconds` is the longest shard's
/// (the shards ran side by side), a group keeps its first case index (and that report's case file and
/// reproduce command), adds its counts and backends, and is known when any report knows it (then it
/// names the known file). A file that is not a campaign report (format einfuzz-fuzz-report/1) is a
/// diagnostic naming it. Unless `allow_mixed`: reports of different seeds, generators or backend
/// lists, or two reports of one shard (their cases would be counted twice), are refused.
Result<MergedCampaign> merge_campaign_reports(const std::vector<std::filesystem::path>& reports, bool allow_mixed);

/// Copies the case file of every new group into `dir` once (known groups name a stored divergence,
/// which stays where it is) and points the group (its file and reproduce command) at the copy. A
/// relative case_file is looked up from the current directory, then below its report's directory with
/// ever fewer of its leading directories (out/found/x.case.json, found/x.case.json, x.case.json). An existing file of the same name is never overwritten: same
/// bytes, nothing to do; different bytes, a message. Appends one message per problem to `messages`;
/// returns false when a case file is missing or cannot be written (the corpus is incomplete).
bool copy_group_case_files(MergedCampaign& merged, const std::filesystem::path& dir,
                           std::vector<std::string>& messages);

/// campaign_report_json of the merged campaign, plus `merged_from` (each report with its shard).
std::string merged_report_json(const MergedCampaign& merged);

}  // namespace einfuzz
