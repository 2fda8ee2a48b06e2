// The campaign's reports: the summary table, the JSON report and the JUnit XML.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "einfuzz/harness/campaign.hpp"

#include "einfuzz/core/text.hpp"

namespace einfuzz {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

nlohmann::ordered_json resembles_json(const Finding& f) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : f.resembles) out.push_back(p.string());
  return out;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  const std::string s = valid_utf8(text);  // XML is UTF-8 here: a stray byte would end the parse
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

std::string not_stored_note(const Finding& f, const CampaignOptions& o) {
  if (f.known) return "";
  if (!o.store) return "not stored (--no-store): its reproduce command reruns its campaign case";
  if (!f.store_error.empty()) return "not stored: " + f.store_error;
  return "";
}

/// The backends that sent more after a complete answer (LateFaultReport), one paragraph each.
void write_late_faults(const CampaignResult& r, const CampaignOptions& o, std::ostream& out) {
  if (r.late_faults.empty()) return;
  out << r.late_faults.size() << (r.late_faults.size() == 1 ? " backend" : " backends")
      << " sent more after a complete answer (PROTOCOL A §3: exactly one response; exit 1):\n";
  for (const LateFaultReport& l : r.late_faults) {
    out << "  LATE  " << l.backend << "  crash  x" << l.count;
    if (!l.file.empty()) {
      out << "  " << l.file.string();
      if (l.case_index) out << "  (case " << *l.case_index << ")";
      if (!o.store) out << "  not stored (--no-store): its reproduce command reruns its campaign case";
      if (!l.store_error.empty()) out << "  not stored: " << l.store_error;
    }
    out << "\n    protocol violation after the complete answer: " << l.evidence << "\n";
    if (!l.file.empty()) out << "    reproduce: " << l.reproduce << "\n";
  }
}

void write_campaign_summary(const CampaignResult& r, const CampaignOptions& o, std::ostream& out) {
  out << "einfuzz fuzz: " << r.cases << " cases in " << fixed(r.seconds, 1) << " s (" << fixed(r.cases_per_second(), 1)
      << " cases/s), seed " << o.seed
      << (o.shards > 1 ? ", shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) : std::string()) << ", "
      << o.jobs << (o.jobs == 1 ? " job" : " jobs")
      << (r.stopped_by_signal ? ", stopped by signal " + std::to_string(r.stopped_by_signal) : std::string()) << "\n\n";
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
    // Wide enough for the name and for every count (a long campaign passes 10^7), two spaces apart.
    std::size_t width = std::max<std::size_t>(name.size() + 2, 8);
    for (const auto& row : r.counts) width = std::max(width, std::to_string(row[k]).size() + 2);
    widths.push_back(width);
    out << pad(name, widths.back());
  }
  out << "groups\n";
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    out << pad(r.backends[b], name_width);
    for (std::size_t i = 0; i < columns.size(); ++i) out << pad(std::to_string(r.counts[b][columns[i]]), widths[i]);
    std::size_t groups = 0;
    for (const Finding& f : r.findings) {
      groups += std::find(f.backends.begin(), f.backends.end(), r.backends[b]) != f.backends.end();
    }
    out << groups << "\n";
  }
  out << "\n";
  if (r.skipped) out << r.skipped << " cases over a harness limit were skipped (run on no backend)\n";
  if (!o.known.empty()) {
    out << r.known_loaded << " stored divergences known";
    for (const auto& k : o.known) out << (&k == &o.known.front() ? " (" : ", ") << k.string();
    out << ")\n";
  }
  for (const std::string& e : r.known_errors) out << "known divergence not read: " << e << "\n";
  write_late_faults(r, o, out);
  if (r.failures == 0) {
    if (r.late_faults.empty()) out << "nothing found\n";
    return;
  }
  const std::size_t fresh = r.new_groups();
  out << r.failures << " failing verdicts in " << r.findings.size() << (r.findings.size() == 1 ? " group" : " groups")
      << ": " << fresh << " new, " << r.findings.size() - fresh << " known";
  if (r.unshrunk) out << " (" << r.unshrunk << " failures of signatures without a group were not shrunk)";
  out << (r.findings.empty() ? "\n" : ":\n");
  for (const bool known : {false, true}) {
    for (const Finding& f : r.findings) {
      if (f.known != known) continue;
      std::string backends;
      for (const std::string& b : f.backends) backends += (backends.empty() ? "" : ",") + b;
      out << (known ? "  known " : "  NEW   ") << backends << "  " << f.verdict << "  x" << f.count << "  "
          << f.file.string() << "  (case " << f.case_index << ")";
      if (const std::string note = not_stored_note(f, o); !note.empty()) out << "  " << note;
      out << "\n"
          << "    group: " << f.signature << "\n";
      for (std::size_t i = 0; i < f.resembles.size(); ++i) {
        out << (i == 0 ? "    stored divergences of its library, verdict, op and dtype: " : ", ")
            << f.resembles[i].string() << (i + 1 == f.resembles.size() ? "\n" : "");
      }
      out
          << (f.first && f.first->gradient_of >= 0
                  ? "    first differing element in the gradient of input " + std::to_string(f.first->gradient_of) + "\n"
                  : std::string())
          << "    reproduce: " << f.reproduce << "\n";
    }
  }
  if (r.unexamined) {
    out << r.unexamined << (r.unexamined == 1 ? " failure" : " failures")
        << " of a signature no group covers came too late to shrink: it may be new (exit 1); rerun with "
           "a longer --seconds or --cases\n";
  }
  if (r.unconfirmed) {
    out << r.unconfirmed << (r.unconfirmed == 1 ? " failure" : " failures");
    std::uint64_t named = 0;
    for (const auto& [backend, n] : r.unconfirmed_by_backend) named += n;
    if (named == r.unconfirmed) {  // a merge with a report that predates the breakdown may lack it
      out << " (";
      const char* sep = "";
      for (const auto& [backend, n] : r.unconfirmed_by_backend) {
        out << sep << backend << " " << n;
        sep = ", ";
      }
      out << ")";
    }
    out << " did not fail again when its shrunk case was re-run on the same backend (a flaky or stateful "
           "backend): not a finding, not stored\n";
  }
}

std::string campaign_report_json(const CampaignResult& r, const CampaignOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = "einfuzz-fuzz-report/1";
  j["generator"] = std::string(kGeneratorVersion);
  j["seed"] = o.seed;
  j["jobs"] = o.jobs;
  // Which cases ran: those i ≡ index (mod count); {0, 1} unsharded (`einfuzz merge` reads it).
  j["shard"] = {{"index", o.shard}, {"count", o.shards}};
  j["cases"] = r.cases;
  j["seconds"] = r.seconds;
  j["cases_per_second"] = r.cases_per_second();
  j["failures"] = r.failures;
  j["unshrunk_failures"] = r.unshrunk;
  j["skipped_cases"] = r.skipped;
  j["stopped_by_signal"] = r.stopped_by_signal;  // 0, or SIGINT/SIGTERM: the run was cut short
  j["unconfirmed_failures"] = r.unconfirmed;
  j["unconfirmed_by_backend"] = nlohmann::ordered_json::object();
  for (const auto& [backend, n] : r.unconfirmed_by_backend) j["unconfirmed_by_backend"][backend] = n;
  j["unexamined_failures"] = r.unexamined;
  j["late_faults"] = nlohmann::ordered_json::array();
  for (const LateFaultReport& l : r.late_faults) {
    nlohmann::ordered_json late = {{"backend", l.backend}, {"count", l.count}, {"evidence", l.evidence}};
    if (l.case_index) late["case_index"] = *l.case_index;
    if (!l.file.empty()) {
      late["case_file"] = l.file.string();
      late["reproduce"] = l.reproduce;
      late["stored"] = o.store && l.store_error.empty();
    }
    j["late_faults"].push_back(std::move(late));
  }
  j["backends"] = nlohmann::ordered_json::array();
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < kVerdictKinds; ++k) {
      if (r.counts[b][k] != 0) counts[verdict_name(static_cast<VerdictKind>(k))] = r.counts[b][k];
    }
    j["backends"].push_back({{"name", r.backends[b]}, {"verdicts", counts}});
  }
  // `findings`: the groups as the report listed them before groups existed (one entry per group).
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
                             {"stored", !f.known && f.store_error.empty() && o.store},
                             {"known", f.known}});
  }
  j["new_groups"] = r.new_groups();
  j["known_divergences"] = r.known_loaded;
  j["groups"] = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    j["groups"].push_back({{"signature", f.signature},
                           {"verdict", f.verdict},
                           {"op", std::string(op_name(f.shrunk.op))},
                           {"kind", case_kind_name(f.shrunk)},
                           {"dtype", std::string(dtype_name(f.shrunk.dtype))},
                           {"backends", f.backends},
                           {"count", f.count},
                           {"case_file", f.file.string()},
                           {"reproduce", f.reproduce},
                           {"known", f.known},
                           {"resembles", resembles_json(f)},
                           {"case_index", f.case_index},
                           {"shrunk_on", f.backend},
                           {"original_verdict", f.original_verdict},
                           {"detail", f.detail},
                           {"shrink_steps", f.shrink_steps},
                           {"stored", !f.known && f.store_error.empty() && o.store}});
    // Which pre-shrink signatures the count came from (what `einfuzz merge` regroups shards by).
    nlohmann::ordered_json shares = nlohmann::ordered_json::array();
    for (const PreShrinkShare& p : f.pre_shrink) {
      shares.push_back({{"signature", p.signature}, {"first_case", p.first_case}, {"count", p.count}});
    }
    j["groups"].back()["pre_shrink"] = std::move(shares);
    // A VJP group: which forward input's cotangent holds the first differing element.
    if (f.first && f.first->gradient_of >= 0) j["groups"].back()["gradient_of"] = f.first->gradient_of;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string campaign_report_junit(const CampaignResult& r) {
  const std::size_t failing = r.new_groups();
  const std::size_t tests = std::max<std::size_t>(1, r.findings.size());
  std::ostringstream out;
  const std::string time = fixed(r.seconds, 3);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"einfuzz fuzz\" tests=\"" << tests << "\" failures=\"" << failing << "\" time=\"" << time
      << "\">\n"
      << "  <testsuite name=\"einfuzz.fuzz\" tests=\"" << tests << "\" failures=\"" << failing << "\" time=\"" << time
      << "\">\n";
  std::string counts = std::to_string(r.cases) + " cases\n";
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    counts += r.backends[b] + ":";
    for (std::size_t k = 0; k < kVerdictKinds; ++k) {
      if (r.counts[b][k] != 0) counts += " " + verdict_name(static_cast<VerdictKind>(k)) + " " + std::to_string(r.counts[b][k]);
    }
    counts += "\n";
  }
  if (r.findings.empty()) {
    out << "    <testcase classname=\"einfuzz.fuzz\" name=\"campaign\" time=\"" << time << "\">\n"
        << "      <system-out>" << xml_escape(counts) << "</system-out>\n"
        << "    </testcase>\n";
  }
  for (const Finding& f : r.findings) {
    std::string backends;
    for (const std::string& b : f.backends) backends += (backends.empty() ? "" : ",") + b;
    const std::string body = f.signature + "\nbackends: " + backends + "\nfailures: " + std::to_string(f.count) +
                             "\ncase: " + f.file.string() + " (case " + std::to_string(f.case_index) +
                             ")\nreproduce: " + f.reproduce + "\n" +
                             (f.first && f.first->gradient_of >= 0
                                  ? "gradient_of: input " + std::to_string(f.first->gradient_of) + "\n"
                                  : std::string());
    out << "    <testcase classname=\"einfuzz.fuzz." << xml_escape(f.family) << "\" name=\"" << xml_escape(f.signature)
        << "\" time=\"0\">\n";
    if (!f.known) {
      out << "      <failure message=\"new group: " << xml_escape(f.verdict) << " on " << xml_escape(backends)
          << "\" type=\"einfuzz.group\">" << xml_escape(body) << "</failure>\n";
    }
    out << "      <system-out>" << xml_escape((f.known ? "known divergence\n" : "") + body) << "</system-out>\n"
        << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace einfuzz
