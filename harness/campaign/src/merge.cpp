// `einfuzz merge`: campaign JSON reports read back into one CampaignResult (counts added, groups
// deduplicated by signature) and the new groups' case files gathered into one corpus.
#include "einfuzz/harness/merge.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/backend_registry.hpp"

namespace einfuzz {
namespace {

using Json = nlohmann::json;
constexpr const char* kFormat = "einfuzz-fuzz-report/1";

Diagnostic not_a_report(const std::filesystem::path& file, const std::string& why) {
  return make_diagnostic(Code::invalidArgument, "'" + file.string() + "' is not a campaign report (" + why + ")");
}

std::optional<std::string> read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::uint64_t count_of(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

std::string text_of(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// VerdictKind by its ORACLE.md §6 name.
std::optional<VerdictKind> kind_from_name(const std::string& name) {
  for (std::size_t k = 0; k < kVerdictKinds; ++k) {
    if (verdict_name(static_cast<VerdictKind>(k)) == name) return static_cast<VerdictKind>(k);
  }
  return std::nullopt;
}

/// One group of a report as a Finding (the fields the report writers read).
Result<Finding> read_group(const Json& g, const std::filesystem::path& file) {
  if (!g.is_object() || !g.contains("signature") || !g["signature"].is_string()) {
    return not_a_report(file, "a group without a signature");
  }
  Finding f;
  f.signature = g["signature"].get<std::string>();
  f.verdict = text_of(g, "verdict");
  f.original_verdict = text_of(g, "original_verdict");
  f.detail = text_of(g, "detail");
  f.backend = text_of(g, "shrunk_on");
  f.family = backend_family(f.backend);
  f.count = count_of(g, "count");
  f.case_index = count_of(g, "case_index");
  f.shrink_steps = static_cast<int>(count_of(g, "shrink_steps"));
  f.known = g.value("known", false);
  f.file = text_of(g, "case_file");
  if (f.known) f.known_file = f.file;
  f.reproduce = text_of(g, "reproduce");
  if (g.contains("resembles") && g["resembles"].is_array()) {
    for (const Json& p : g["resembles"]) {
      if (p.is_string()) f.resembles.emplace_back(p.get<std::string>());
    }
  }
  if (g.contains("backends") && g["backends"].is_array()) {
    for (const Json& b : g["backends"]) {
      if (b.is_string()) f.backends.push_back(b.get<std::string>());
    }
  }
  if (g.contains("pre_shrink") && g["pre_shrink"].is_array()) {
    for (const Json& p : g["pre_shrink"]) {
      if (!p.is_object() || !p.contains("signature") || !p["signature"].is_string()) {
        return not_a_report(file, "a pre_shrink entry without a signature");
      }
      f.pre_shrink.push_back({p["signature"].get<std::string>(), count_of(p, "first_case"), count_of(p, "count")});
    }
  }
  f.shrunk.op = text_of(g, "op") == "reduce" ? Op::reduce : Op::einsum;
  if (auto dtype = dtype_from_name(text_of(g, "dtype"))) f.shrunk.dtype = *dtype;
  // The verdict's kind is its label's name before any "(…)" detail the label adds.
  const std::string label = f.verdict;
  for (std::size_t k = 0; k < kVerdictKinds; ++k) {
    const std::string name = verdict_name(static_cast<VerdictKind>(k));
    if (label.rfind(name, 0) == 0) f.kind = static_cast<VerdictKind>(k);
  }
  return f;
}

/// One report's group, before the merge.
struct SourceGroup {
  Finding group;
  std::filesystem::path report_dir;
};

/// The merged groups of `sources`, into m.result.findings and m.report_dirs. Each shard shrank its
/// own first failure of a pre-shrink signature, which may give another group than the case an
/// unsharded campaign would have shrunk (its first failure of that signature over all shards). So
/// a pre-shrink signature's failures go to the group of its earliest shrunk case over all reports,
/// as in one unsharded campaign; a group left holding none is dropped. Groups of reports without
/// `pre_shrink` entries are merged by their signature alone.
void regroup(std::vector<SourceGroup>& sources, MergedCampaign& m) {
  std::map<std::string, std::pair<std::uint64_t, std::string>> owner;  // pre-shrink → (first case, group)
  for (const SourceGroup& s : sources) {
    for (const PreShrinkShare& p : s.group.pre_shrink) {
      const auto [it, added] = owner.emplace(p.signature, std::pair{p.first_case, s.group.signature});
      if (!added && p.first_case < it->second.first) it->second = {p.first_case, s.group.signature};
    }
  }
  std::vector<Finding>& out = m.result.findings;
  std::map<std::string, std::size_t> by_signature;
  std::vector<bool> holds;               // the group holds failures (owned shares, or a share-less source)
  std::vector<std::uint64_t> rep_case;   // the case index of the source it was taken from
  for (SourceGroup& s : sources) {
    const Finding& f = s.group;
    auto [it, added] = by_signature.emplace(f.signature, out.size());
    if (added) {
      out.push_back(f);
      out.back().count = 0;
      out.back().pre_shrink.clear();
      out.back().case_index = UINT64_MAX;
      m.report_dirs.push_back(s.report_dir);
      holds.push_back(false);
      rep_case.push_back(f.case_index);
    } else {
      Finding& g = out[it->second];
      // The earliest case's file and command; a known group names its stored divergence.
      if ((f.known && !g.known) || (f.known == g.known && f.case_index < rep_case[it->second])) {
        Finding keep = std::move(g);
        g = f;
        g.count = keep.count;
        g.pre_shrink = std::move(keep.pre_shrink);
        g.case_index = keep.case_index;
        g.backends = std::move(keep.backends);
        g.known = f.known || keep.known;
        m.report_dirs[it->second] = s.report_dir;
        rep_case[it->second] = f.case_index;
      }
      g.known = g.known || f.known;
      for (const std::string& b : f.backends) {
        if (std::find(g.backends.begin(), g.backends.end(), b) == g.backends.end()) g.backends.push_back(b);
      }
    }
    if (f.pre_shrink.empty()) {
      Finding& g = out[it->second];
      g.count += f.count;
      g.case_index = std::min(g.case_index, f.case_index);
      holds[it->second] = true;
    }
  }
  for (const SourceGroup& s : sources) {
    for (const PreShrinkShare& p : s.group.pre_shrink) {
      const std::size_t at = by_signature.at(owner.at(p.signature).second);
      Finding& g = out[at];
      g.count += p.count;
      g.case_index = std::min(g.case_index, p.first_case);
      holds[at] = true;
      const auto share = std::find_if(g.pre_shrink.begin(), g.pre_shrink.end(),
                                      [&](const PreShrinkShare& q) { return q.signature == p.signature; });
      if (share == g.pre_shrink.end()) {
        g.pre_shrink.push_back({p.signature, owner.at(p.signature).first, p.count});
      } else {
        share->count += p.count;
      }
    }
  }
  std::vector<Finding> kept;
  std::vector<std::filesystem::path> dirs;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!holds[i]) continue;
    kept.push_back(std::move(out[i]));
    dirs.push_back(std::move(m.report_dirs[i]));
  }
  out = std::move(kept);
  m.report_dirs = std::move(dirs);
}

}  // namespace

Result<MergedCampaign> merge_campaign_reports(const std::vector<std::filesystem::path>& reports, bool allow_mixed) {
  if (reports.empty()) return make_diagnostic(Code::invalidArgument, "merge needs at least one report");
  MergedCampaign m;
  m.options.jobs = 0;
  m.options.store = false;
  std::vector<SourceGroup> sources;
  std::map<std::string, std::size_t> backend_index;
  std::string generator;
  std::vector<std::string> first_backends;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const std::filesystem::path& file = reports[r];
    const auto text = read_text(file);
    if (!text) return make_diagnostic(Code::invalidArgument, "cannot read the report '" + file.string() + "'");
    const Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return not_a_report(file, "not JSON");
    if (!j.is_object() || text_of(j, "format") != kFormat) return not_a_report(file, std::string("no \"format\": \"") + kFormat + "\"");
    if (!j.contains("backends") || !j["backends"].is_array() || !j.contains("groups") || !j["groups"].is_array()) {
      return not_a_report(file, "no backends or groups");
    }
    const std::uint64_t seed = count_of(j, "seed");
    std::vector<std::string> names;
    for (const Json& b : j["backends"]) {
      if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) return not_a_report(file, "a backend without a name");
      names.push_back(b["name"].get<std::string>());
    }
    ShardId shard;
    if (j.contains("shard") && j["shard"].is_object()) {
      shard.index = count_of(j["shard"], "index");
      shard.count = std::max<std::uint64_t>(1, count_of(j["shard"], "count"));
      if (shard.index >= shard.count) return not_a_report(file, "a shard index not below its count");
    }
    if (r == 0) {
      m.options.seed = seed;
      generator = text_of(j, "generator");
      first_backends = names;
    } else if (!allow_mixed) {
      const auto mixed = [&](const std::string& what) {
        return make_diagnostic(Code::invalidArgument, "'" + file.string() + "' has another " + what + " than '" +
                                                          reports[0].string() + "' (--allow-mixed merges them anyway)");
      };
      if (seed != m.options.seed) return mixed("seed");
      if (text_of(j, "generator") != generator) return mixed("generator");
      if (names != first_backends) return mixed("backend list");
      if (shard.count != m.shards.front().count) return mixed("shard count");
      if (std::find(m.shards.begin(), m.shards.end(), shard) != m.shards.end()) {
        return make_diagnostic(Code::invalidArgument, "'" + file.string() + "' is shard " + std::to_string(shard.index) +
                                                          "/" + std::to_string(shard.count) +
                                                          " again: its cases would be counted twice");
      }
    }
    m.reports.push_back(file);
    m.shards.push_back(shard);
    CampaignResult& res = m.result;
    res.cases += count_of(j, "cases");
    res.failures += count_of(j, "failures");
    res.unshrunk += count_of(j, "unshrunk_failures");
    res.skipped += count_of(j, "skipped_cases");
    res.unconfirmed += count_of(j, "unconfirmed_failures");
    if (j.contains("unconfirmed_by_backend") && j["unconfirmed_by_backend"].is_object()) {
      for (const auto& [backend, n] : j["unconfirmed_by_backend"].items()) {
        if (!n.is_number_unsigned()) return not_a_report(file, "a non-count in unconfirmed_by_backend");
        res.unconfirmed_by_backend[backend] += n.get<std::uint64_t>();
      }
    }
    res.unexamined += count_of(j, "unexamined_failures");
    // Backends that answered more than once: counts added per backend, the first shard's first kept.
    if (j.contains("late_faults") && j["late_faults"].is_array()) {
      for (const Json& l : j["late_faults"]) {
        if (!l.is_object() || !l.contains("backend") || !l["backend"].is_string()) {
          return not_a_report(file, "a late fault without its backend");
        }
        const std::string backend = l["backend"].get<std::string>();
        auto it = std::find_if(res.late_faults.begin(), res.late_faults.end(),
                               [&](const LateFaultReport& r) { return r.backend == backend; });
        if (it == res.late_faults.end()) {
          LateFaultReport r;
          r.backend = backend;
          if (l.contains("evidence") && l["evidence"].is_string()) r.evidence = l["evidence"].get<std::string>();
          if (l.contains("case_index") && l["case_index"].is_number_unsigned()) r.case_index = l["case_index"].get<std::uint64_t>();
          if (l.contains("case_file") && l["case_file"].is_string()) r.file = l["case_file"].get<std::string>();
          if (l.contains("reproduce") && l["reproduce"].is_string()) r.reproduce = l["reproduce"].get<std::string>();
          it = res.late_faults.insert(res.late_faults.end(), std::move(r));
        }
        it->count += count_of(l, "count");
      }
    }
    res.known_loaded = std::max<std::size_t>(res.known_loaded, count_of(j, "known_divergences"));
    if (res.stopped_by_signal == 0) res.stopped_by_signal = static_cast<int>(count_of(j, "stopped_by_signal"));
    if (j.contains("seconds") && j["seconds"].is_number()) res.seconds = std::max(res.seconds, j["seconds"].get<double>());
    m.options.jobs += static_cast<unsigned>(std::max<std::uint64_t>(1, count_of(j, "jobs")));
    for (const Json& b : j["backends"]) {
      const std::string name = b["name"].get<std::string>();
      auto [it, added] = backend_index.emplace(name, res.backends.size());
      if (added) {
        res.backends.push_back(name);
        res.counts.push_back({});
      }
      if (!b.contains("verdicts") || !b["verdicts"].is_object()) continue;
      for (const auto& [verdict, n] : b["verdicts"].items()) {
        const auto kind = kind_from_name(verdict);
        if (!kind || !n.is_number_unsigned()) return not_a_report(file, "an unknown verdict '" + verdict + "'");
        res.counts[it->second][static_cast<std::size_t>(*kind)] += n.get<std::uint64_t>();
      }
    }
    for (const Json& g : j["groups"]) {
      auto f = read_group(g, file);
      if (!f) return std::move(f).error();
      sources.push_back({std::move(*f), file.parent_path()});
    }
  }
  regroup(sources, m);
  // Backends listed in the first report's order (then the others'), as a single campaign lists them.
  for (Finding& f : m.result.findings) {
    std::sort(f.backends.begin(), f.backends.end(), [&](const std::string& a, const std::string& b) {
      const auto ia = backend_index.find(a), ib = backend_index.find(b);
      const std::size_t na = ia == backend_index.end() ? SIZE_MAX : ia->second;
      const std::size_t nb = ib == backend_index.end() ? SIZE_MAX : ib->second;
      return na < nb;
    });
  }
  // Ordered by case index, like a campaign's groups (report_dirs follow their groups).
  std::vector<std::size_t> order(m.result.findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m.result.findings[a].case_index < m.result.findings[b].case_index;
  });
  std::vector<Finding> findings;
  std::vector<std::filesystem::path> dirs;
  for (std::size_t i : order) {
    findings.push_back(std::move(m.result.findings[i]));
    dirs.push_back(std::move(m.report_dirs[i]));
  }
  m.result.findings = std::move(findings);
  m.report_dirs = std::move(dirs);
  const std::uint64_t n = m.shards.front().count;
  if (std::all_of(m.shards.begin(), m.shards.end(), [&](const ShardId& s) { return s.count == n; })) {
    for (std::uint64_t k = 0; k < n && m.missing_shards.size() < 1000; ++k) {
      if (std::none_of(m.shards.begin(), m.shards.end(), [&](const ShardId& s) { return s.index == k; })) {
        m.missing_shards.push_back(k);
      }
    }
  }
  return m;
}

bool copy_group_case_files(MergedCampaign& m, const std::filesystem::path& dir, std::vector<std::string>& messages) {
  bool complete = true;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    messages.push_back("error[io]: cannot create " + dir.string() + ": " + ec.message());
    return false;
  }
  m.options.store = true;
  m.options.corpus = dir;
  for (std::size_t i = 0; i < m.result.findings.size(); ++i) {
    Finding& f = m.result.findings[i];
    if (f.known || f.file.empty()) continue;
    std::vector<std::filesystem::path> candidates = {f.file};
    if (f.file.is_relative()) {
      // Next to the report, with ever fewer leading directories: "out/found/x.case.json" of a CI
      // artifact that kept only what was below out/ is found as found/x.case.json, then x.case.json.
      std::vector<std::filesystem::path> parts(f.file.begin(), f.file.end());
      for (std::size_t skip = 0; skip < parts.size(); ++skip) {
        std::filesystem::path rest;
        for (std::size_t p = skip; p < parts.size(); ++p) rest /= parts[p];
        candidates.push_back(m.report_dirs[i] / rest);
      }
    }
    std::optional<std::string> text;
    for (const auto& c : candidates) {
      if (std::filesystem::is_regular_file(c, ec) && (text = read_text(c))) break;
    }
    if (!text) {
      f.store_error = "case file not found";
      messages.push_back("error[io]: the case file '" + f.file.string() + "' of group " + f.signature +
                         " was not found (looked in the current directory and next to its report): not copied");
      complete = false;
      continue;
    }
    const std::filesystem::path target = dir / f.file.filename();
    const std::string error = write_file_atomically(target.string(), *text, /*no_replace=*/true);
    if (!error.empty()) {
      const auto existing = std::filesystem::exists(target, ec) ? read_text(target) : std::nullopt;
      if (!existing) {
        f.store_error = error;
        messages.push_back("error[io]: cannot write " + target.string() + ": " + error);
        complete = false;
        continue;
      }
      // Case files are named by their case's hash: the same name is the same case, perhaps found
      // with another origin (seed, date). The file already there stays.
      if (*existing != *text) {
        messages.push_back("note: " + target.string() + " exists and differs from '" + f.file.string() +
                           "' (another origin of the same case?): kept, not overwritten");
      }
    }
    // The reproduce command names the copy now.
    const std::string from = f.file.string(), to = target.string();
    for (std::size_t at = f.reproduce.find(from); !from.empty() && at != std::string::npos;
         at = f.reproduce.find(from, at + to.size())) {
      f.reproduce.replace(at, from.size(), to);
    }
    f.file = target;
  }
  return complete;
}

std::string merged_report_json(const MergedCampaign& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::parse(campaign_report_json(m.result, m.options));
  out.erase("shard");  // the merge is no one shard: `merged_from` says which it covers
  out["merged_from"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < m.reports.size(); ++r) {
    out["merged_from"].push_back({{"report", m.reports[r].string()},
                                  {"shard", {{"index", m.shards[r].index}, {"count", m.shards[r].count}}}});
  }
  out["missing_shards"] = m.missing_shards;
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace einfuzz
