// The HTML report of `fuzz --html` and `replay --html`: one self-contained page (inline CSS and SVG,
// no script, no network) with the verdict matrix, the |error| / B histograms, cases per second over
// time and the finding groups with their minimal cases.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/replay.hpp"

namespace einfuzz {
namespace {

/// One backend's row of the page.
struct PageBackend {
  std::string name;
  std::array<std::uint64_t, kVerdictKinds> counts{};
  std::array<std::uint64_t, kErrorBins> bins{};
  bool any_order = false;
};

/// One finding group (campaign) or failed case (replay).
struct PageGroup {
  std::string title;
  std::string status;  ///< "new", "known", "failed", …
  bool alarm = false;  ///< shown in red (new / failed)
  std::vector<std::pair<std::string, std::string>> facts;
  std::string reproduce;
  const Case* minimal = nullptr;
  std::string verdict;
  std::string detail;
  std::optional<ElementEvidence> first;
};

struct Page {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<PageBackend> backends;
  std::vector<std::pair<double, std::uint64_t>> samples;
  std::string groups_heading;
  std::string no_groups;
  std::vector<PageGroup> groups;
};

/// Untrusted text (backends, case files, patterns) for HTML text and attribute values: control
/// characters written as \xNN, cut at 8000 bytes, then XML-escaped.
std::string h(std::string_view s) { return xml_escape(backend_text(s, 8000)); }

std::string num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fff;max-width:1150px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ccc;padding:3px 7px;font-size:13px;text-align:right;vertical-align:top}
th{background:#f1f3f5}td.l,th.l{text-align:left}.zero{color:#bbb}.bad{background:#fde2e1;color:#8a1c12}
.ok{background:#e3f4e6}code,pre{font-family:ui-monospace,monospace;font-size:12px}
pre{background:#f6f8fa;padding:6px 8px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
.group{border:1px solid #ddd;border-left:5px solid #888;padding:4px 12px;margin:12px 0}
.group.alarm{border-left-color:#c0392b}.tag{font-weight:bold;padding:0 6px;border-radius:3px;background:#eee}
.alarm .tag{background:#c0392b;color:#fff}.note{color:#555;font-size:13px}
.hist{display:inline-block;margin:6px 18px 6px 0;vertical-align:top}
)";

void write_facts(std::ostringstream& out, const std::vector<std::pair<std::string, std::string>>& facts) {
  out << "<table class=\"facts\">";
  for (const auto& [k, v] : facts) out << "<tr><th class=\"l\">" << h(k) << "</th><td class=\"l\">" << h(v) << "</td></tr>";
  out << "</table>\n";
}

/// Backend × verdict class. The classes no backend got are left out (named below the table), so the
/// matrix fits the page; pass and pass(bitwise) are always shown.
void write_matrix(std::ostringstream& out, const Page& p) {
  std::vector<std::size_t> shown;
  std::string omitted;
  for (std::size_t k = 0; k < kVerdictKinds; ++k) {
    const auto kind = static_cast<VerdictKind>(k);
    bool any = kind == VerdictKind::pass || kind == VerdictKind::pass_bitwise;
    for (const PageBackend& b : p.backends) any |= b.counts[k] != 0;
    if (any) {
      shown.push_back(k);
    } else {
      omitted += (omitted.empty() ? "" : ", ") + verdict_name(kind);
    }
  }
  out << "<section id=\"verdicts\"><h2>Verdict matrix</h2>\n<table><tr><th class=\"l\">backend</th>";
  for (std::size_t k : shown) out << "<th>" << h(verdict_name(static_cast<VerdictKind>(k))) << "</th>";
  out << "</tr>\n";
  for (const PageBackend& b : p.backends) {
    out << "<tr><th class=\"l\">" << h(b.name) << "</th>";
    for (std::size_t k : shown) {
      const std::uint64_t n = b.counts[k];
      const auto kind = static_cast<VerdictKind>(k);
      const char* cls = n == 0 ? "zero" : is_failure(kind) ? "bad" : kind == VerdictKind::pass || kind == VerdictKind::pass_bitwise ? "ok" : "";
      out << "<td class=\"" << cls << "\">" << n << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
  if (!omitted.empty()) out << "<p class=\"note\">No backend got: " << h(omitted) << ".</p>\n";
  out << "</section>\n";
}

/// One backend's histogram: a bar per non-empty bin, heights on a log scale of the count (so a
/// bin of 3 stays visible next to one of 10^6), the failing bin (> 1) in red.
void write_histogram(std::ostringstream& out, const PageBackend& b) {
  std::uint64_t total = 0, most = 0;
  for (std::uint64_t n : b.bins) {
    total += n;
    most = std::max(most, n);
  }
  out << "<div class=\"hist\"><h3>" << h(b.name) << "</h3>";
  if (total == 0) {
    out << "<p class=\"note\">"
        << (b.any_order ? "no any-order judged element with a finite bound"
                        : "judged bitwise (ordered semantics): every element must equal the reference")
        << "</p></div>\n";
    return;
  }
  constexpr int bar = 16, gap = 3, left = 40, top = 52, plot = 150, bottom = 70;
  const int width = left + static_cast<int>(kErrorBins) * (bar + gap) + 10;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << top + plot + bottom
      << "\" role=\"img\" aria-label=\"|error| / B histogram of " << h(b.name) << "\">";
  out << "<line x1=\"" << left << "\" y1=\"" << top + plot << "\" x2=\"" << width - 6 << "\" y2=\"" << top + plot
      << "\" stroke=\"#444\"/>";
  const double scale = std::log10(static_cast<double>(most) + 1);
  for (std::size_t k = 0; k < kErrorBins; ++k) {
    const int x = left + static_cast<int>(k) * (bar + gap);
    const std::uint64_t n = b.bins[k];
    if (n != 0) {
      const int height = std::max(2, static_cast<int>(std::lround(plot * std::log10(static_cast<double>(n) + 1) / scale)));
      const char* fill = k == kErrorBins - 1 ? "#c0392b" : k == 0 ? "#2e7d32" : "#3b6fb6";
      out << "<rect x=\"" << x << "\" y=\"" << top + plot - height << "\" width=\"" << bar << "\" height=\"" << height
          << "\" fill=\"" << fill << "\"><title>" << h(error_bin_label(k)) << ": " << n << "</title></rect>";
      // The count, upright along the bar's axis: a horizontal 6-digit count would cover its neighbours.
      const int cx = x + bar / 2 + 3, cy = top + plot - height - 3;
      out << "<text x=\"" << cx << "\" y=\"" << cy << "\" font-size=\"9\" transform=\"rotate(-90 " << cx << " " << cy
          << ")\">" << n << "</text>";
    }
    const int lx = x + bar / 2, ly = top + plot + 8;
    out << "<text x=\"" << lx << "\" y=\"" << ly << "\" font-size=\"9\" text-anchor=\"end\" transform=\"rotate(-60 "
        << lx << " " << ly << ")\">" << h(error_bin_label(k)) << "</text>";
  }
  out << "<text x=\"4\" y=\"10\" font-size=\"10\">elements per bin (bar height: log scale)</text></svg>";
  out << "<p class=\"note\">" << total << " judged elements; " << b.bins[kErrorBins - 1]
      << " beyond the bound</p></div>\n";
}

void write_accuracy(std::ostringstream& out, const Page& p) {
  out << "<section id=\"accuracy\"><h2>Accuracy: |error| / B per backend</h2>\n<p class=\"note\">Over the "
         "any-order judged elements with a finite result and a finite bound B (ORACLE.md §2): how close each "
         "backend comes to the bound. 0: exact; (1/2, 1]: near the bound; &gt; 1: beyond it (a failure).</p>\n";
  for (const PageBackend& b : p.backends) write_histogram(out, b);
  out << "</section>\n";
}

/// Cases per second between consecutive samples, drawn as steps so that even one interval shows.
void write_rate(std::ostringstream& out, const Page& p) {
  out << "<section id=\"rate\"><h2>Cases per second over time</h2>\n";
  std::vector<std::pair<double, double>> points;  // (time, rate) corners of the step line
  double max_rate = 0, end = 0;
  for (std::size_t i = 1; i < p.samples.size(); ++i) {
    const double dt = p.samples[i].first - p.samples[i - 1].first;
    if (!(dt > 0)) continue;
    const double rate = static_cast<double>(p.samples[i].second - p.samples[i - 1].second) / dt;
    points.emplace_back(p.samples[i - 1].first, rate);
    points.emplace_back(p.samples[i].first, rate);
    max_rate = std::max(max_rate, rate);
    end = p.samples[i].first;
  }
  if (points.empty() || !(end > 0)) {
    out << "<p class=\"note\">no samples (the run was too short to measure)</p></section>\n";
    return;
  }
  if (!(max_rate > 0)) max_rate = 1;
  constexpr int left = 60, top = 14, width = 700, height = 200;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 20 << "\" height=\"" << top + height + 40
      << "\" role=\"img\" aria-label=\"cases per second over time\">";
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width << "\" height=\"" << height
      << "\" fill=\"#fafbfc\" stroke=\"#999\"/>";
  out << "<polyline fill=\"none\" stroke=\"#3b6fb6\" stroke-width=\"2\" points=\"";
  for (const auto& [t, r] : points) {
    out << num(left + width * t / end, 1) << "," << num(top + height - height * r / max_rate, 1) << " ";
  }
  out << "\"/>";
  out << "<text x=\"" << left - 4 << "\" y=\"" << top + 10 << "\" font-size=\"11\" text-anchor=\"end\">"
      << num(max_rate, 0) << "</text><text x=\"" << left - 4 << "\" y=\"" << top + height
      << "\" font-size=\"11\" text-anchor=\"end\">0</text>";
  out << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">0 s</text><text x=\""
      << left + width << "\" y=\"" << top + height + 16 << "\" font-size=\"11\" text-anchor=\"end\">" << num(end, end < 10 ? 2 : 1)
      << " s</text><text x=\"" << left + width / 2 << "\" y=\"" << top + height + 32
      << "\" font-size=\"11\" text-anchor=\"middle\">time since the start; cases/s between progress ticks</text>";
  out << "</svg></section>\n";
}

std::string coords_text(const std::vector<std::int64_t>& coords) {
  std::string s = "[";
  for (std::size_t i = 0; i < coords.size(); ++i) s += (i ? "," : "") + std::to_string(coords[i]);
  return s + "]";
}

/// One input as a small table: one row per index of the leading axes, one column per index of the
/// last axis; tensors over 64 elements are summarised.
void write_tensor(std::ostringstream& out, const Tensor& t, std::size_t index, bool cotangent = false) {
  out << "<p class=\"note\">" << (cotangent ? std::string("cotangent") : "input " + std::to_string(index)) << ": " << h(dtype_name(t.dtype())) << " " << h(format_shape(t.shape()));
  const auto size = static_cast<std::int64_t>(t.size());
  if (size == 0) {
    out << " (no element)</p>\n";
    return;
  }
  if (size > 64) {
    out << " (" << size << " elements, not shown)</p>\n";
    return;
  }
  out << "</p><table class=\"tensor\">";
  const std::int64_t cols = t.shape().empty() ? 1 : std::max<std::int64_t>(1, t.shape().back());
  for (std::int64_t row = 0; row * cols < size; ++row) {
    std::vector<std::int64_t> lead;
    std::int64_t rest = row;
    for (std::size_t d = t.shape().size() > 0 ? t.shape().size() - 1 : 0; d-- > 0;) {
      lead.insert(lead.begin(), rest % t.shape()[d]);
      rest /= t.shape()[d];
    }
    out << "<tr><th>" << h(coords_text(lead)) << "</th>";
    for (std::int64_t c = 0; c < cols; ++c) out << "<td><code>" << h(format_value(t, row * cols + c)) << "</code></td>";
    out << "</tr>";
  }
  out << "</table>\n";
}

void write_case(std::ostringstream& out, const Case& c) {
  std::string shapes;
  for (const Tensor& t : c.inputs) shapes += (shapes.empty() ? "" : ", ") + format_shape(t.shape());
  out << "<table class=\"case\"><tr><th class=\"l\">op</th><td class=\"l\">"
      << (c.is_vjp() ? "vjp of " : "")
      << (c.op == Op::einsum ? "einsum" : "reduce" + (c.reduction ? " " + h(*c.reduction) : std::string())) << "</td></tr>"
      << "<tr><th class=\"l\">pattern</th><td class=\"l\"><code>" << h(c.pattern) << "</code></td></tr>"
      << "<tr><th class=\"l\">shapes</th><td class=\"l\">" << h(shapes) << "</td></tr>"
      << "<tr><th class=\"l\">dtype</th><td class=\"l\">" << h(dtype_name(c.dtype)) << "</td></tr>";
  if (!c.axis_lengths.empty()) {
    std::string axes;
    for (const auto& [name, n] : c.axis_lengths) axes += (axes.empty() ? "" : ", ") + name + "=" + std::to_string(n);
    out << "<tr><th class=\"l\">axis lengths</th><td class=\"l\">" << h(axes) << "</td></tr>";
  }
  out << "</table>\n";
  for (std::size_t i = 0; i < c.inputs.size(); ++i) write_tensor(out, c.inputs[i], i);
  if (c.cotangent) write_tensor(out, *c.cotangent, 0, true);
}

void write_group(std::ostringstream& out, const PageGroup& g) {
  out << "<div class=\"group" << (g.alarm ? " alarm" : "") << "\"><h3><span class=\"tag\">" << h(g.status) << "</span> "
      << h(g.title) << "</h3>\n";
  write_facts(out, g.facts);
  if (!g.reproduce.empty()) out << "<p class=\"note\">reproduce:</p><pre>" << h(g.reproduce) << "</pre>\n";
  if (g.minimal) write_case(out, *g.minimal);
  if (!g.verdict.empty()) {
    out << "<table class=\"verdict\"><tr><th class=\"l\">verdict</th><td class=\"l\">" << h(g.verdict) << "</td></tr>";
    if (!g.detail.empty()) out << "<tr><th class=\"l\">detail</th><td class=\"l\">" << h(g.detail) << "</td></tr>";
    if (g.first) {
      const ElementEvidence& e = *g.first;
      const auto row = [&](const char* k, const std::string& v) {
        if (!v.empty()) out << "<tr><th class=\"l\">" << k << "</th><td class=\"l\"><code>" << h(v) << "</code></td></tr>";
      };
      if (e.gradient_of >= 0) row("gradient of", "input " + std::to_string(e.gradient_of));
      row("first differing element", coords_text(e.coords) + " (flat " + std::to_string(e.flat_index) + ")");
      row(e.expected_label.empty() ? "expected" : ("expected (" + e.expected_label + ")").c_str(), e.expected);
      row("actual", e.actual);
      row("exact s(o)", e.exact);
      row("bound B(o)", e.bound_text);
      if (e.bound_multiples > 0) row("|r - s| / B", num(e.bound_multiples, 3));
      row("reachable", e.reachable);
    }
    out << "</table>\n";
  }
  out << "</div>\n";
}

std::string render_page(const Page& p) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:\"><title>"
      << h(p.title) << "</title><style>" << kStyle << "</style></head><body>\n<h1>" << h(p.title) << "</h1>\n";
  write_facts(out, p.facts);
  write_matrix(out, p);
  write_accuracy(out, p);
  write_rate(out, p);
  out << "<section id=\"groups\"><h2>" << h(p.groups_heading) << "</h2>\n";
  if (p.groups.empty()) out << "<p class=\"note\">" << h(p.no_groups) << "</p>\n";
  for (const PageGroup& g : p.groups) write_group(out, g);
  out << "</section>\n</body></html>\n";
  return out.str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string campaign_report_html(const CampaignResult& r, const CampaignOptions& o) {
  Page p;
  p.title = "einfuzz fuzz campaign report";
  p.facts = {{"cases", std::to_string(r.cases)},
             {"time", num(r.seconds, 1) + " s (" + num(r.cases_per_second(), 1) + " cases/s)"},
             {"seed", std::to_string(o.seed)},
             {"jobs", std::to_string(o.jobs)},
             {"backends", join(r.backends)},
             {"failing verdicts", std::to_string(r.failures)},
             {"groups", std::to_string(r.findings.size()) + " (" + std::to_string(r.new_groups()) + " new)"},
             {"skipped (harness limit)", std::to_string(r.skipped)}};
  if (r.unexamined) p.facts.emplace_back("unexamined failures (may be new)", std::to_string(r.unexamined));
  if (r.stopped_by_signal) p.facts.emplace_back("stopped by signal", std::to_string(r.stopped_by_signal));
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    PageBackend row;
    row.name = r.backends[b];
    if (b < r.counts.size()) row.counts = r.counts[b];
    if (b < r.error_bins.size()) row.bins = r.error_bins[b];
    row.any_order = b < r.any_order.size() && r.any_order[b];
    p.backends.push_back(std::move(row));
  }
  p.samples = r.progress_samples;
  p.groups_heading = "Finding groups";
  p.no_groups = "No failing verdict was grouped: nothing found.";
  for (const Finding& f : r.findings) {
    PageGroup g;
    g.title = f.signature;
    g.status = f.known ? "known" : "new";
    g.alarm = !f.known;
    g.facts = {{"backends", join(f.backends)},
               {"failures", std::to_string(f.count)},
               {"first seen", "case " + std::to_string(f.case_index) + " (" + f.original_verdict + ")"},
               {f.known ? "stored divergence" : "case file", f.file.string()}};
    if (!f.store_error.empty()) g.facts.emplace_back("not stored", f.store_error);
    // The summary's hint where to read a new group against (campaign.hpp, Finding::resembles).
    std::vector<std::string> resembles;
    for (const auto& file : f.resembles) resembles.push_back(file.string());
    if (!resembles.empty()) g.facts.emplace_back("stored divergences of its library, verdict, op and dtype", join(resembles));
    g.reproduce = f.reproduce;
    g.minimal = &f.shrunk;
    g.verdict = f.verdict;
    g.detail = f.detail;
    g.first = f.first;
    p.groups.push_back(std::move(g));
  }
  return render_page(p);
}

std::string replay_report_html(const ReplayResult& r, const ReproduceContext& context) {
  Page p;
  p.title = "einfuzz replay report";
  p.facts = {{"cases", std::to_string(r.entries.size())},
             {"failed", std::to_string(r.failed)},
             {"time", num(r.seconds, 1) + " s"},
             {"backends", join(r.backends)}};
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    PageBackend row;
    row.name = r.backends[b];
    row.any_order = b < r.any_order.size() && r.any_order[b];
    for (const ReplayEntry& e : r.entries) {
      if (b >= e.backends.size()) continue;
      const Verdict& v = e.backends[b].verdict;
      ++row.counts[static_cast<std::size_t>(v.kind)];
      for (std::size_t k = 0; k < kErrorBins; ++k) row.bins[k] += v.error_bins[k];
    }
    p.backends.push_back(std::move(row));
  }
  p.samples = r.progress_samples;
  p.groups_heading = "Failed cases and stored divergences";
  p.no_groups = "Every case passed and no stored divergence was met.";
  for (const ReplayEntry& e : r.entries) {
    bool known_failure = false;
    for (std::size_t b = 0; b < e.backends.size(); ++b) {
      known_failure |= b < e.known.size() && e.known[b] && is_failure(e.backends[b].verdict.kind);
    }
    if (e.passed && !known_failure) continue;
    PageGroup g;
    g.title = e.file;
    g.status = e.passed ? "known" : "failed";
    g.alarm = !e.passed;
    g.facts = {{"expect", e.expect}, {"reference", e.reference}};
    if (e.unreadable) g.facts.emplace_back("unreadable", render(*e.unreadable));
    if (e.expect_failure) g.facts.emplace_back("expect failure", *e.expect_failure);
    for (const std::string& s : e.stale) g.facts.emplace_back("stale", s);
    // The first backend with a failing verdict gives the verdict and the first differing element.
    for (std::size_t b = 0; b < e.backends.size(); ++b) {
      const Verdict& v = e.backends[b].verdict;
      const bool known = b < e.known.size() && e.known[b];
      g.facts.emplace_back(e.backends[b].backend, v.label() + (known && is_failure(v.kind) ? " (known)" : ""));
      if (g.verdict.empty() && is_failure(v.kind)) {
        g.verdict = e.backends[b].backend + ": " + v.label();
        g.detail = v.detail;
        g.first = v.first;
      }
    }
    if (!e.unreadable) g.reproduce = replay_reproduce(r, e, context);
    if (e.stored) g.minimal = &*e.stored;
    p.groups.push_back(std::move(g));
  }
  return render_page(p);
}

}  // namespace einfuzz
