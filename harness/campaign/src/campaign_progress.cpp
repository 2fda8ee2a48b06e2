// A campaign's progress output: the progress line and each finding as it is stored.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "campaign_shared.hpp"

namespace einfuzz::campaign_detail {

namespace {

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

std::string progress_line(Shared& shared, double elapsed) {
  const CampaignOptions& o = shared.options();
  const std::uint64_t cases = shared.cases;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f", elapsed > 0 ? static_cast<double>(cases) / elapsed : 0.0);
  std::string line = "fuzz " + format_seconds(elapsed) + "  " + std::to_string(cases) + " cases  " + rate + " cases/s";
  for (std::size_t b = 0; b < shared.backends().size(); ++b) {
    std::uint64_t pass = 0, other = 0, fail = 0, unsupported = 0;
    for (std::size_t k = 0; k < kVerdictKinds; ++k) {
      const auto kind = static_cast<VerdictKind>(k);
      const std::uint64_t n = shared.count(b, kind);
      if (kind == VerdictKind::pass || kind == VerdictKind::pass_bitwise) {
        pass += n;
      } else if (kind == VerdictKind::unsupported) {
        unsupported += n;
      } else if (is_failure(kind)) {
        fail += n;
      } else {
        other += n;
      }
    }
    line += " | " + shared.backends()[b] + " " + std::to_string(pass) + " pass";
    if (other) line += " " + std::to_string(other) + " indet/note";
    if (unsupported) line += " " + std::to_string(unsupported) + " unsup";
    if (fail) line += " " + std::to_string(fail) + " FAIL";
  }
  // Groups found so far, so a long campaign shows at a glance whether anything new turned up.
  const auto [fresh, known] = shared.group_counts();
  line += " | " + std::to_string(fresh + known) + (fresh + known == 1 ? " group" : " groups") + " (" +
          std::to_string(fresh) + " new, " + std::to_string(known) + " known)";
  if (o.cases) {
    const std::uint64_t total = shard_case_count(*o.cases, o.shard, o.shards);
    line += " | " + std::to_string(total - std::min(total, cases)) + " cases left";
  } else {
    line += " | " + format_seconds(std::max(0.0, o.seconds.value_or(60) - elapsed)) + " left";
  }
  return line;
}

void print_findings(Shared& shared, ProgressSink sink, bool& line_open) {
  for (const Finding& f : shared.take_new_findings()) {
    if (line_open) *sink.out << "\r\033[K";
    line_open = false;
    *sink.out << (f.known ? "known: " : "found: ") << f.backend << " " << f.verdict << " (case " << f.case_index
              << ", shrunk in " << f.shrink_steps << " steps) -> " << f.file.string()
              << "\n  reproduce: " << f.reproduce << "\n";
    if (const std::string note = not_stored_note(f, shared.options()); !note.empty()) *sink.out << "  " << note << "\n";
  }
}

}  // namespace einfuzz::campaign_detail
