// Replaying stored cases (see replay.hpp).
#include "einfuzz/harness/replay.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <set>
#include <sstream>

#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/core/precision_text.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "case_files.hpp"

namespace einfuzz {

namespace {

/// Why `path` is not replayed as a file (a dangling symlink, a FIFO, a socket, a device), or "" for
/// a regular file. Decided without opening it: opening a FIFO would block until a writer came.
std::string not_a_case_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (ec) return "cannot stat it: " + ec.message();
  const fs::file_status target = fs::status(path, ec);
  if (fs::is_symlink(link) && !fs::exists(target)) {
    std::error_code ec2;
    return "a dangling symlink (to '" + fs::read_symlink(path, ec2).string() + "')";
  }
  if (fs::is_regular_file(target)) return {};
  if (fs::is_fifo(target)) return "a FIFO, not a regular file (not opened)";
  if (fs::is_socket(target)) return "a socket, not a regular file";
  if (fs::is_character_file(target) || fs::is_block_file(target)) return "a device, not a regular file";
  return "not a regular file";
}

}  // namespace

Result<std::vector<std::filesystem::path>> collect_case_files(std::span<const std::string> paths) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(p, ec);
    if (fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(status)) {
      out.emplace_back(p);  // a dangling symlink: reported as an unreadable case, not skipped
      continue;
    }
    if (ec || !fs::exists(status)) {
      return make_diagnostic(Code::invalidArgument, "replay: '" + p + "' does not exist");
    }
    if (!fs::is_directory(status)) {
      out.emplace_back(p);
      continue;
    }
    // Anything named *.case.json that is not a directory: a FIFO or a dangling symlink is reported
    // by replay_cases (never skipped silently, never opened).
    const std::vector<fs::path> found = campaign_detail::list_case_files(p, campaign_detail::CaseFileWalk::non_directories, ec);
    if (ec) return make_diagnostic(Code::invalidArgument, "replay: cannot list '" + p + "': " + ec.message());
    if (found.empty()) return make_diagnostic(Code::invalidArgument, "replay: no *.case.json file under '" + p + "'");
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

namespace {

/// The library family of a stored divergence (replay.hpp), or "" for any other case.
std::string divergence_family(const Case& c) {
  if (origin_value(c, "library").empty() || origin_value(c, "verdict").empty()) return {};
  const std::string backend = origin_value(c, "backend");
  return backend.empty() ? std::string() : backend_family(backend);
}

/// Fills `e.known` and `e.stale` (replay.hpp: a stored divergence is a strict expected failure);
/// `libraries` are the families with stored divergences among the replayed cases.
/// The recorded backends of a stored divergence: `origin.backend`, then those in `origin.variants`.
std::vector<std::string> recorded_backends(const Case& c) {
  std::vector<std::string> recorded = {origin_value(c, "backend")};
  const std::string variants = origin_value(c, "variants");
  for (std::size_t i = 0; i < variants.size();) {
    std::size_t j = variants.find(',', i);
    if (j == std::string::npos) j = variants.size();
    std::string v = variants.substr(i, j - i);
    if (!v.empty() && std::find(recorded.begin(), recorded.end(), v) == recorded.end()) recorded.push_back(std::move(v));
    i = j + 1;
  }
  return recorded;
}

void judge_divergence(const Case& c, const std::set<std::string>& libraries, ReplayEntry& e) {
  e.known.assign(e.backends.size(), false);
  const std::string library = origin_value(c, "library"), backend = origin_value(c, "backend"),
                    verdict = origin_value(c, "verdict");
  if (divergence_family(c).empty()) return;
  const std::vector<std::string> recorded = recorded_backends(c);
  const std::string family = backend_family(backend);
  for (std::size_t b = 0; b < e.backends.size(); ++b) {
    const BackendOutcome& o = e.backends[b];
    if (std::find(recorded.begin(), recorded.end(), o.backend) != recorded.end()) {
      e.known[b] = true;
      if (o.verdict.label() != verdict) {
        e.stale.push_back(o.backend + ": the stored divergence no longer reproduces: recorded " + verdict +
                          (e.profile ? " under profile " + profile_text(*e.profile) : std::string()) + ", now " +
                          o.verdict.label() + " (" + library + " was fixed or changed: update the registry)");
      }
    } else if (backend_family(o.backend) == family || libraries.count(backend_family(o.backend)) != 0) {
      // Another variant of the library, or another library with divergences of its own (judged on
      // its own stored cases): shown, not judged.
      e.known[b] = true;
    }
  }
}

/// A profile surprise must pass under its recorded backends' declared profiles (else it is a bug
/// under the declaration, stored without origin.profile): one more run on those backends, each
/// judged as declared; a failure there is `stale`.
void require_declared_pass(const Case& c, std::span<Backend* const> backends, const RunOptions& options,
                           ReplayEntry& e) {
  const std::vector<std::string> recorded = recorded_backends(c);
  std::vector<Backend*> mine;
  for (Backend* b : backends) {
    if (std::find(recorded.begin(), recorded.end(), b->name()) != recorded.end()) mine.push_back(b);
  }
  if (mine.empty()) return;
  for (const BackendOutcome& o : run_case(c, mine, options).backends) {
    if (!is_failure(o.verdict.kind)) continue;
    e.stale.push_back(o.backend + ": a profile surprise must pass under the declared profile, got " + o.verdict.label() +
                      " (a divergence under the declaration: store it without origin.profile; `check` without "
                      "--profile shows it)");
  }
}

}  // namespace

ReplayResult replay_cases(std::span<const std::filesystem::path> files, std::span<Backend* const> backends,
                          const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ReplayResult result;
  for (Backend* b : backends) {
    result.backends.emplace_back(b->name());
    result.any_order.push_back(b->capabilities().semantics == Semantics::any_order);
  }
  result.progress_samples.emplace_back(0.0, 0);
  std::vector<Result<Case>> cases;
  std::set<std::string> libraries;
  for (const auto& path : files) {
    // A FIFO, socket, device or dangling symlink is reported as unreadable, never opened.
    if (const std::string why = not_a_case_file(path); !why.empty()) {
      cases.push_back(make_diagnostic(Code::malformedCase, path.string() + ": " + why));
      continue;
    }
    cases.push_back(read_case_file(path, options.limits));
    if (cases.back()) {
      if (std::string f = divergence_family(*cases.back()); !f.empty()) libraries.insert(std::move(f));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    ReplayEntry e;
    e.file = files[i].string();
    auto& c = cases[i];
    if (!c) {
      e.unreadable = c.error();
      e.expect = e.reference = "-";
    } else {
      e.expect = !c->expect_error ? "-" : c->expect_error->empty() ? "accept" : *c->expect_error;
      // A stored profile surprise (origin.profile) is judged under that profile on its recorded
      // backends, unless --profile chose one for every backend.
      RunOptions judged = options;
      if (!options.profile && !divergence_family(*c).empty()) {
        e.profile = origin_profile(*c);
        if (e.profile) {
          judged.profile = e.profile;
          judged.profile_backends = recorded_backends(*c);
        }
      }
      CaseOutcome outcome = run_case(*c, backends, judged);
      e.reference = outcome.skipped     ? std::string("skipped (harness limit)")
                    : outcome.rejection ? "rejects " + std::string(code_name(outcome.rejection->code))
                                        : "accepts";
      e.backends = std::move(outcome.backends);
      e.expect_failure = std::move(outcome.expect_failure);
      judge_divergence(*c, libraries, e);
      if (e.profile) require_declared_pass(*c, backends, options, e);
      e.stored = std::move(*c);
      bool failed = false;
      for (std::size_t b = 0; b < e.backends.size(); ++b) failed |= !e.known[b] && is_failure(e.backends[b].verdict.kind);
      e.passed = !e.expect_failure && !failed && e.stale.empty();
    }
    result.failed += !e.passed;
    result.entries.push_back(std::move(e));
    result.progress_samples.emplace_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), result.entries.size());
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + "  ";
}

/// Why an entry failed, one line per reason.
std::vector<std::string> reasons(const ReplayEntry& e) {
  std::vector<std::string> out;
  if (e.unreadable) out.push_back(render(*e.unreadable));
  if (e.expect_failure) out.push_back("expect: " + *e.expect_failure);
  for (const std::string& s : e.stale) out.push_back(s);
  for (std::size_t i = 0; i < e.backends.size(); ++i) {
    const BackendOutcome& b = e.backends[i];
    if (is_failure(b.verdict.kind) && !(i < e.known.size() && e.known[i])) {
      out.push_back(b.backend + ": " + b.verdict.label() + (b.verdict.detail.empty() ? "" : "  " + b.verdict.detail));
    }
  }
  return out;
}

/// A table cell: the verdict, marked when it is a stored divergence's.
std::string cell(const ReplayEntry& e, std::size_t b) {
  const std::string label = e.backends[b].verdict.label();
  return b < e.known.size() && e.known[b] && is_failure(e.backends[b].verdict.kind) ? label + " (known)" : label;
}

}  // namespace

std::string replay_reproduce(const ReplayResult& r, const ReplayEntry& e, ReproduceContext context) {
  if (context.backends.empty()) context.backends = r.backends;
  // A profile surprise whose failures are all on its recorded backends: those backends under the
  // recorded profile (the command can name one profile for all the backends it runs).
  if (e.profile && !context.run.profile && !e.expect_failure && e.stored) {
    const std::vector<std::string> recorded = recorded_backends(*e.stored);
    bool recorded_only = true;
    for (std::size_t b = 0; b < e.backends.size(); ++b) {
      const bool mine = std::find(recorded.begin(), recorded.end(), e.backends[b].backend) != recorded.end();
      recorded_only &= mine || !is_failure(e.backends[b].verdict.kind);
    }
    if (recorded_only) {
      std::vector<std::string> names;
      for (const BackendOutcome& o : e.backends) {
        if (std::find(recorded.begin(), recorded.end(), o.backend) != recorded.end()) names.push_back(o.backend);
      }
      if (!names.empty()) context.backends = std::move(names);
      context.run.profile = e.profile;
    }
  }
  return reproduce_command(e.file, context);
}

void write_replay_table(const ReplayResult& r, std::ostream& out, const ReproduceContext& context) {
  std::size_t file_w = 4, expect_w = 6, ref_w = 9;
  for (const ReplayEntry& e : r.entries) {
    file_w = std::max(file_w, e.file.size());
    expect_w = std::max(expect_w, e.expect.size());
    ref_w = std::max(ref_w, e.reference.size());
  }
  std::vector<std::size_t> backend_w;
  for (std::size_t b = 0; b < r.backends.size(); ++b) {
    std::size_t w = r.backends[b].size();
    for (const ReplayEntry& e : r.entries)
      if (b < e.backends.size()) w = std::max(w, cell(e, b).size());
    backend_w.push_back(w);
  }
  out << pad("case", file_w) << pad("expect", expect_w) << pad("reference", ref_w);
  for (std::size_t b = 0; b < r.backends.size(); ++b) out << pad(r.backends[b], backend_w[b]);
  out << "status\n";
  for (const ReplayEntry& e : r.entries) {
    out << pad(e.file, file_w) << pad(e.expect, expect_w) << pad(e.reference, ref_w);
    for (std::size_t b = 0; b < r.backends.size(); ++b) {
      out << pad(b < e.backends.size() ? cell(e, b) : "-", backend_w[b]);
    }
    out << (e.passed ? "ok" : "FAIL") << "\n";
  }
  std::string backends;
  for (const auto& b : r.backends) backends += (backends.empty() ? "" : ",") + b;
  for (const ReplayEntry& e : r.entries) {
    if (e.passed) continue;
    out << "\nFAIL " << e.file << "\n";
    for (const std::string& reason : reasons(e)) out << "  " << reason << "\n";
    if (!e.unreadable) out << "  reproduce: " << replay_reproduce(r, e, context) << "\n";
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", r.seconds);
  out << "\nreplayed " << r.entries.size() << (r.entries.size() == 1 ? " case" : " cases") << " on "
      << (backends.empty() ? "no backend" : backends) << " in " << secs << " s: " << r.entries.size() - r.failed
      << " passed, " << r.failed << " failed\n";
}

void write_replay_table(const ReplayResult& r, std::ostream& out) {
  ReproduceContext names;
  names.backends.clear();
  write_replay_table(r, out, names);
}

std::string replay_report_json(const ReplayResult& r) {
  ReproduceContext names;
  names.backends.clear();
  return replay_report_json(r, names);
}

std::string replay_report_json(const ReplayResult& r, const ReproduceContext& context) {
  nlohmann::ordered_json j;
  j["format"] = "einfuzz-replay-report/1";
  j["cases"] = r.entries.size();
  j["failed"] = r.failed;
  j["seconds"] = r.seconds;
  j["backends"] = r.backends;
  j["entries"] = nlohmann::ordered_json::array();
  for (const ReplayEntry& e : r.entries) {
    nlohmann::ordered_json entry = {{"file", e.file}, {"expect", e.expect}, {"reference", e.reference},
                            {"status", e.passed ? "pass" : "fail"}};
    entry["verdicts"] = nlohmann::ordered_json::array();
    for (const BackendOutcome& b : e.backends) {
      const std::size_t i = entry["verdicts"].size();
      entry["verdicts"].push_back({{"backend", b.backend}, {"verdict", b.verdict.label()}, {"detail", b.verdict.detail},
                                   {"known", i < e.known.size() && e.known[i]}});
    }
    if (!e.stale.empty()) entry["stale"] = e.stale;
    if (e.unreadable) entry["unreadable"] = render(*e.unreadable);
    if (e.expect_failure) entry["expect_failure"] = *e.expect_failure;
    if (!e.passed && !e.unreadable) entry["reproduce"] = replay_reproduce(r, e, context);
    j["entries"].push_back(std::move(entry));
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string replay_report_junit(const ReplayResult& r) {
  std::ostringstream out;
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", r.seconds);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"einfuzz replay\" tests=\"" << r.entries.size() << "\" failures=\"" << r.failed
      << "\" time=\"" << time << "\">\n"
      << "  <testsuite name=\"einfuzz.replay\" tests=\"" << r.entries.size() << "\" failures=\"" << r.failed
      << "\" time=\"" << time << "\">\n";
  for (const ReplayEntry& e : r.entries) {
    out << "    <testcase classname=\"einfuzz.replay\" name=\"" << xml_escape(e.file) << "\">\n";
    if (!e.passed) {
      std::string body;
      for (const std::string& reason : reasons(e)) body += reason + "\n";
      out << "      <failure message=\"" << xml_escape(reasons(e).empty() ? "failed" : reasons(e).front())
          << "\" type=\"einfuzz.replay\">" << xml_escape(body) << "</failure>\n";
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace einfuzz
