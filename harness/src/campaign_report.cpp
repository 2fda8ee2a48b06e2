// The campaign's reports: the summary table, the JSON report and the JUnit XML.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <ostream>
#include <sstream>

#include "einfuzz/harness/campaign.hpp"

namespace einfuzz {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

void write_campaign_summary(const CampaignResult& r, const CampaignOptions& o, std::ostream& out) {
  out << "einfuzz fuzz: " << r.cases << " cases in " << fixed(r.seconds, 1) << " s (" << fixed(r.cases_per_second(), 1)
      << " cases/s), seed " << o.seed << ", " << o.jobs << (o.jobs == 1 ? " job" : " jobs") << "\n\n";
  std::vector<std::size_t> columns;  // verdict kinds seen at least once
  for (std::size_t k = 0; k < kVerdictKinds; ++k) {
    for (const auto& row : r.counts) {
      if (row[k] != 0) {
        columns.push_back(k);
        break;
      }
    }
  }
  std::size_t name_width = 8;
  for (const auto& b : r.backends) name_width = std::max(name_width, b.size() + 2);
  std::vector<std::size_t> widths;
  out << pad("backend", name_width);
  for (std::size_t k : columns) {
    const std::string name = verdict_name(static_cast<VerdictKind>(k));
    widths.push_back(std::max<std::size_t>(name.size() + 2, 8));
    out << pad(name, widths.back());
  }
  out << "findings\n";
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    out << pad(r.backends[b], name_width);
    for (std::size_t i = 0; i < columns.size(); ++i) out << pad(std::to_string(r.counts[b][columns[i]]), widths[i]);
    std::size_t findings = 0;
    for (const Finding& f : r.findings) findings += f.backend == r.backends[b];
    out << findings << "\n";
  }
  out << "\n";
  if (r.skipped) out << r.skipped << " cases over a harness limit were skipped (run on no backend)\n";
  if (r.failures == 0) {
    out << "nothing found\n";
    return;
  }
  out << r.failures << " failing verdicts, " << r.findings.size() << " distinct findings";
  if (r.unshrunk) out << " (" << r.unshrunk << " failures over the shrink limit were not shrunk)";
  out << (r.findings.empty() ? "\n" : ":\n");
  for (const Finding& f : r.findings) {
    out << "  " << f.backend << "  " << f.verdict << "  " << f.file.string() << "  (case " << f.case_index << ")\n"
        << "    reproduce: " << f.reproduce << "\n";
  }
  if (r.unconfirmed) {
    out << r.unconfirmed << (r.unconfirmed == 1 ? " failure" : " failures")
        << " did not fail again when its shrunk case was re-run on the same backend (a flaky or stateful "
           "backend): not a finding, not stored\n";
  }
}

std::string campaign_report_json(const CampaignResult& r, const CampaignOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = "einfuzz-fuzz-report/1";
  j["generator"] = std::string(kGeneratorVersion);
  j["seed"] = o.seed;
  j["jobs"] = o.jobs;
  j["cases"] = r.cases;
  j["seconds"] = r.seconds;
  j["cases_per_second"] = r.cases_per_second();
  j["failures"] = r.failures;
  j["unshrunk_failures"] = r.unshrunk;
  j["skipped_cases"] = r.skipped;
  j["unconfirmed_failures"] = r.unconfirmed;
  j["backends"] = nlohmann::ordered_json::array();
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < kVerdictKinds; ++k) {
      if (r.counts[b][k] != 0) counts[verdict_name(static_cast<VerdictKind>(k))] = r.counts[b][k];
    }
    j["backends"].push_back({{"name", r.backends[b]}, {"verdicts", counts}});
  }
  j["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    j["findings"].push_back({{"case_index", f.case_index},
                             {"backend", f.backend},
                             {"verdict", f.verdict},
                             {"original_verdict", f.original_verdict},
                             {"detail", f.detail},
                             {"case_file", f.file.string()},
                             {"reproduce", f.reproduce},
                             {"shrink_steps", f.shrink_steps},
                             {"stored", f.store_error.empty() && o.store}});
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string campaign_report_junit(const CampaignResult& r) {
  std::size_t failing = 0;
  for (const auto& b : r.backends) {
    for (const Finding& f : r.findings) {
      if (f.backend == b) {
        ++failing;
        break;
      }
    }
  }
  std::ostringstream out;
  const std::string time = fixed(r.seconds, 3);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"einfuzz fuzz\" tests=\"" << r.backends.size() << "\" failures=\"" << failing
      << "\" time=\"" << time << "\">\n"
      << "  <testsuite name=\"einfuzz.fuzz\" tests=\"" << r.backends.size() << "\" failures=\"" << failing
      << "\" time=\"" << time << "\">\n";
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    out << "    <testcase classname=\"einfuzz.fuzz\" name=\"" << xml_escape(r.backends[b]) << "\" time=\"" << time
        << "\">\n";
    std::string body;
    std::size_t n = 0;
    for (const Finding& f : r.findings) {
      if (f.backend != r.backends[b]) continue;
      ++n;
      body += f.verdict + " " + f.file.string() + " (case " + std::to_string(f.case_index) + ")\n  reproduce: " +
              f.reproduce + "\n";
    }
    if (n != 0) {
      out << "      <failure message=\"" << n << (n == 1 ? " finding" : " findings") << "\" type=\"einfuzz.finding\">"
          << xml_escape(body) << "</failure>\n";
    }
    std::string counts;
    for (std::size_t k = 0; k < kVerdictKinds; ++k) {
      if (r.counts[b][k] != 0) counts += verdict_name(static_cast<VerdictKind>(k)) + ": " + std::to_string(r.counts[b][k]) + "\n";
    }
    out << "      <system-out>" << xml_escape(std::to_string(r.cases) + " cases\n" + counts) << "</system-out>\n"
        << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace einfuzz
