// `einfuzz merge`: the JSON reports of sharded (or repeated) campaigns → one summary, report, JUnit
// file and corpus, exiting like `einfuzz fuzz`.
#include <filesystem>
#include <iostream>
#include <memory>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/merge.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

constexpr const char* kMergeFooter = R"(
Merges the --report files of `einfuzz fuzz` runs, typically the shards --shard 0/N … N-1/N of one
seed (docs/scale.md): cases, failures and the backend × verdict counts are added (backends matched by
name); `seconds` is the longest run's (shards run side by side); groups are deduplicated by their
signature: counts added, backends joined, the first case index kept with that report's case file and
reproduce command, and a group known in any report is known. The summary is the table `fuzz` prints.

Refused (exit 2) unless --allow-mixed: reports of different seeds, generator versions, backend lists
or shard counts, and the same shard twice (its cases would be counted twice). With --allow-mixed the
counts are added all the same; the seed shown is the first report's. Shards of N that no report
covers are named (the merge then covers part of the campaign).

--corpus DIR copies the case file of every new group into DIR once (known groups name a stored
divergence, which stays where it is). A relative case_file (out/found/x.case.json) is looked up from
the current directory, then below its report's directory with ever fewer leading directories
(REPORTDIR/out/found/x.case.json, REPORTDIR/found/x.case.json, REPORTDIR/x.case.json): a CI artifact
that holds a shard's report and corpus is found wherever it was unpacked. A file of the same name already in DIR is never
overwritten: if it differs, merge says so. The merged report and summary name the copies.

Examples:  einfuzz merge shard-*.json
           einfuzz merge shard-*/report.json --report merged.json --junit merged.xml --corpus corpus/found

Exit status: 0 no new group, 1 a new group (or a failure that may be new), 2 bad usage, a file that is
not a campaign report, or reports that do not belong together, 3 an I/O error (a report could not be
written, a new group's case file was not found or could not be copied).)";

bool write_report(const std::string& path, const std::string& text, const char* what) {
  const std::string error = write_file_atomically(path, text);
  if (error.empty()) return true;
  std::cerr << "error[io]: cannot write the " << what << ": " << error << "\n";
  return false;
}

}  // namespace

Subcommand add_merge(CLI::App& app) {
  struct State {
    std::vector<std::string> reports;
    std::string report, junit, corpus;
    bool allow_mixed = false;
  };
  auto st = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge the JSON reports of sharded campaigns: counts added, groups deduplicated");
  cmd->footer(kMergeFooter);
  cmd->add_option("reports", st->reports, "campaign JSON reports (einfuzz fuzz --report)")->required();
  cmd->add_option("--report", st->report, "write the merged JSON report to FILE");
  cmd->add_option("--junit", st->junit, "write JUnit XML (one testcase per group) to FILE");
  cmd->add_option("--corpus", st->corpus, "copy the new groups' case files into DIR (never overwriting)");
  cmd->add_flag("--allow-mixed", st->allow_mixed,
                "merge reports of different seeds, generators, backend lists or shards anyway");
  return {cmd, [st] {
            std::vector<std::filesystem::path> files(st->reports.begin(), st->reports.end());
            auto merged = merge_campaign_reports(files, st->allow_mixed);
            if (!merged) {
              std::cerr << render(merged.error()) << "\n";
              return 2;
            }
            bool ok = true;
            if (!st->corpus.empty()) {
              std::vector<std::string> messages;
              ok &= copy_group_case_files(*merged, st->corpus, messages);
              for (const std::string& m : messages) std::cerr << m << "\n";
            }
            std::cout << "einfuzz merge: " << merged->reports.size()
                      << (merged->reports.size() == 1 ? " report" : " reports");
            for (std::size_t r = 0; r < merged->shards.size(); ++r) {
              std::cout << (r == 0 ? " (shards " : ", ") << merged->shards[r].index << "/" << merged->shards[r].count;
            }
            std::cout << ")\n";
            if (!merged->missing_shards.empty()) {
              std::cout << "shards not merged (their cases are missing):";
              for (std::uint64_t k : merged->missing_shards) std::cout << " " << k << "/" << merged->shards.front().count;
              std::cout << "\n";
            }
            if (merged->result.stopped_by_signal) {
              std::cout << "a merged campaign was stopped by signal " << merged->result.stopped_by_signal
                        << ": its cases are partly missing\n";
            }
            write_campaign_summary(merged->result, merged->options, std::cout);
            if (!st->report.empty()) ok &= write_report(st->report, merged_report_json(*merged), "JSON report");
            if (!st->junit.empty()) ok &= write_report(st->junit, campaign_report_junit(merged->result), "JUnit report");
            if (!ok) return kExitIncomplete;
            return merged->result.found_new() ? 1 : 0;
          }};
}

}  // namespace einfuzz::cli
