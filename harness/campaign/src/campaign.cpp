// The campaign loop: workers draw case i from (seed, i), run it, shrink and store each new failure;
// the calling thread prints progress and the findings as they arrive.
#include "einfuzz/harness/campaign.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <span>
#include <sstream>
#include <thread>

#include "einfuzz/harness/group.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/reproduce.hpp"

namespace einfuzz {

GenOptions campaign_gen_options() {
  GenOptions options;
  options.long_axis_percent = 4;
  return options;
}

namespace {

using Clock = std::chrono::steady_clock;

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

/// State shared by the workers and the progress thread.
class Shared {
 public:
  Shared(const CampaignOptions& options, std::vector<std::string> backends)
      : options_(options), backends_(std::move(backends)),
        counts_(std::make_unique<std::atomic<std::uint64_t>[]>(backends_.size() * kVerdictKinds)) {
    for (std::size_t i = 0; i < backends_.size() * kVerdictKinds; ++i) counts_[i] = 0;
  }

  const CampaignOptions& options() const { return options_; }
  const std::vector<std::string>& backends() const { return backends_; }
  std::atomic<std::uint64_t>& count(std::size_t backend, VerdictKind kind) {
    return counts_[backend * kVerdictKinds + static_cast<std::size_t>(kind)];
  }
  std::atomic<std::uint64_t> cases{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> unshrunk{0};
  std::atomic<std::uint64_t> skipped{0};
  std::atomic<std::uint64_t> unconfirmed{0};
  /// Failures of a pre-shrink signature with no group that found no time left to shrink: they may be new.
  std::atomic<std::uint64_t> unexamined{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> store_failures{0};  ///< findings whose case file could not be written

  /// What a worker does with a failure of pre-shrink signature `pre`.
  enum class Claim { shrink, counted, unshrunk };

  /// Shrink when `pre` has no group, no shrink in progress and shrinks left; else the failure is
  /// counted toward its group (now, or when the shrink in progress yields one) or as unshrunk.
  Claim claim(const std::string& pre) {
    std::lock_guard lock(mutex_);
    PreShrink& p = pre_[pre];
    if (!p.group.empty()) {
      ++findings_[by_signature_.at(p.group)].count;
      return Claim::counted;
    }
    if (p.in_progress) {
      ++p.pending;
      return Claim::counted;
    }
    if (p.shrinks >= options_.shrink_limit) return Claim::unshrunk;
    ++p.shrinks;
    p.in_progress = true;
    return Claim::shrink;
  }

  /// The shrink of `pre` gave no group (unconfirmed, or no time was left): its pending failures are
  /// unshrunk, and a later failure may try again.
  void release(const std::string& pre) {
    std::lock_guard lock(mutex_);
    PreShrink& p = pre_[pre];
    p.in_progress = false;
    unshrunk += p.pending;
    p.pending = 0;
  }

  /// Adds the group of `f` (or merges it into the group with the same signature) and attributes
  /// every failure of `pre` to it.
  void add_finding(const std::string& pre, Finding&& f) {
    std::lock_guard lock(mutex_);
    PreShrink& p = pre_[pre];
    p.in_progress = false;
    p.group = f.signature;
    const std::uint64_t count = 1 + p.pending;
    p.pending = 0;
    const auto it = by_signature_.find(f.signature);
    if (it != by_signature_.end()) {
      Finding& group = findings_[it->second];
      group.case_index = std::min(group.case_index, f.case_index);
      group.count += count;
      for (const std::string& b : f.backends) {
        if (std::find(group.backends.begin(), group.backends.end(), b) == group.backends.end()) group.backends.push_back(b);
      }
      std::sort(group.backends.begin(), group.backends.end(), [&](const std::string& a, const std::string& b) {
        return backend_order(a) < backend_order(b);
      });
      return;
    }
    f.count = count;
    if (options_.store && !f.known) store(f);
    by_signature_[f.signature] = findings_.size();
    pending_messages_.push_back(findings_.size());
    findings_.push_back(std::move(f));
    if (options_.max_findings != 0 && findings_.size() >= options_.max_findings) stop = true;
  }

  /// The known divergences: group signature → stored file (set before any worker starts).
  void set_known(std::map<std::string, std::filesystem::path> known) { known_ = std::move(known); }
  /// True when failures of pre-shrink signature `pre` already belong to a group.
  bool pre_grouped(const std::string& pre) {
    std::lock_guard lock(mutex_);
    const auto it = pre_.find(pre);
    return it != pre_.end() && !it->second.group.empty();
  }

  /// True when `signature` is already a group.
  bool has_group(const std::string& signature) {
    std::lock_guard lock(mutex_);
    return by_signature_.count(signature) != 0;
  }

  /// The stored divergence with group signature `signature`, if any (read-only once workers run).
  std::optional<std::filesystem::path> known_file(const std::string& signature) const {
    const auto it = known_.find(signature);
    if (it == known_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<Finding> take_new_findings() {
    std::lock_guard lock(mutex_);
    std::vector<Finding> out;
    for (std::size_t i : pending_messages_) out.push_back(findings_[i]);
    pending_messages_.clear();
    return out;
  }

  std::vector<Finding> findings() {
    std::lock_guard lock(mutex_);
    return findings_;
  }

  void add_records(std::vector<CaseRecord>&& records) {
    std::lock_guard lock(mutex_);
    for (CaseRecord& r : records) records_.push_back(std::move(r));
  }
  std::vector<CaseRecord> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

 private:
  void store(Finding& f) {
    std::error_code ec;
    std::filesystem::create_directories(options_.corpus, ec);
    if (ec) {
      f.store_error = "cannot create " + options_.corpus.string() + ": " + ec.message();
      ++store_failures;
      return;
    }
    // Complete or absent (a full disk must not leave a truncated file that blocks the finding).
    const std::string text = write_case(f.shrunk);
    std::string error = write_file_atomically(f.file.string(), text, /*no_replace=*/true);
    if (!error.empty() && std::filesystem::exists(f.file, ec)) {
      if (read_case_file(f.file, options_.run.limits)) return;  // the same case found earlier: keep its origin
      // A damaged file of that name (e.g. cut short by an older build on a full disk): replace it.
      error = write_file_atomically(f.file.string(), text);
    }
    if (!error.empty()) {
      f.store_error = error;
      ++store_failures;
    }
  }

  const CampaignOptions& options_;
  std::vector<std::string> backends_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::mutex mutex_;
  /// One pre-shrink signature: its shrinks so far, and the group its failures belong to.
  struct PreShrink {
    int shrinks = 0;
    bool in_progress = false;
    std::uint64_t pending = 0;  ///< failures met while its shrink was in progress
    std::string group;          ///< the group signature, once a shrink was confirmed
  };

  std::size_t backend_order(const std::string& name) const {
    return static_cast<std::size_t>(std::find(backends_.begin(), backends_.end(), name) - backends_.begin());
  }

  std::map<std::string, PreShrink> pre_;
  std::map<std::string, std::filesystem::path> known_;
  std::map<std::string, std::size_t> by_signature_;
  std::vector<Finding> findings_;
  std::vector<std::size_t> pending_messages_;
  std::vector<CaseRecord> records_;
};

/// The shrunk group of one failure, or nullopt when its shrunk case, re-run, is no longer a failing
/// verdict of the original kind (then nothing is stored: a stored case must reproduce). `variants`
/// are the campaign's other backends of the same family: each that reproduces the group is listed.
std::optional<Finding> shrink_finding(const Case& generated, std::uint64_t index, std::size_t backend_index,
                                      std::span<Backend* const> all, const Verdict& verdict, Shared& shared,
                                      double max_seconds, Clock::time_point deadline) {
  const CampaignOptions& o = shared.options();
  Backend& backend = *all[backend_index];
  Finding f;
  f.case_index = index;
  f.backend = std::string(backend.name());
  f.family = backend_family(f.backend);
  f.kind = verdict.kind;
  f.original_verdict = verdict.label();
  ShrinkOptions shrink = o.shrink;
  if (max_seconds > 0) shrink.max_seconds = max_seconds;
  if (!o.cases && verdict.kind == VerdictKind::timeout) {
    // A hung backend spends a whole timeout on each candidate and on the confirming re-run: shrink
    // only while one timeout is left before the deadline, so it costs at most one timeout past it.
    const double room =
        std::chrono::duration<double>(deadline - Clock::now()).count() - o.backend_options.timeout_seconds;
    if (room > 0) {
      shrink.max_seconds = shrink.max_seconds > 0 ? std::min(shrink.max_seconds, room) : room;
    } else {
      shrink.max_attempts = 0;
    }
  }
  const ShrinkResult shrunk = shrink_case(generated, backend, verdict.kind, o.run, shrink);
  f.shrunk = shrunk.shrunk;
  f.shrink_steps = shrunk.steps;
  f.shrink_attempts = shrunk.attempts;
  // The shrunk case's own verdict and the reference's conclusion (its `expect`).
  Backend* one[] = {&backend};
  const CaseOutcome final_outcome = run_case(f.shrunk, one, o.run);
  const Verdict& final_verdict = final_outcome.backends.at(0).verdict;
  if (!is_failure(final_verdict.kind) || final_verdict.kind != verdict.kind) return std::nullopt;
  f.verdict = final_verdict.label();
  f.detail = final_verdict.detail;
  f.signature = group_signature(f.shrunk, f.family, f.verdict);
  for (std::size_t b = 0; b < all.size(); ++b) {
    if (b == backend_index) {
      f.backends.push_back(f.backend);
      continue;
    }
    const std::string name(all[b]->name());
    if (backend_family(name) != f.family) continue;
    Backend* variant[] = {all[b]};
    const CaseOutcome v = run_case(f.shrunk, variant, o.run);
    if (!v.backends.empty() && group_signature(f.shrunk, f.family, v.backends[0].verdict.label()) == f.signature) {
      f.backends.push_back(name);
    }
  }
  f.shrunk.expect_error = final_outcome.rejection ? std::string(code_name(final_outcome.rejection->code)) : "";
  std::string variants;
  for (const std::string& b : f.backends) variants += (variants.empty() ? "" : ",") + b;
  f.shrunk.origin = {{"seed", std::to_string(o.seed)},
                     {"case", std::to_string(index)},
                     {"generator", std::string(kGeneratorVersion)},
                     {"backend", f.backend},
                     {"variants", variants},
                     {"verdict", f.verdict},
                     {"found", today_utc()}};
  f.file = o.corpus / case_file_name(f.shrunk);
  if (auto known = shared.known_file(f.signature)) {
    f.known = true;
    f.known_file = *known;
    f.file = *known;
  }
  const std::string spec = backend_index < o.backend_specs.size() ? o.backend_specs[backend_index] : f.backend;
  f.reproduce = reproduce_command(f.file.string(), {o.command, {spec}, o.run, o.backend_options});
  return f;
}

/// True when `f`'s shrunk case fails the same way on a fresh instance of its backend (built once per
/// worker, on the first new group): a divergence that depends on what the backend process ran before
/// (numpy reading memory behind an empty operand) would not reproduce with the printed command.
bool reproduces_fresh(const Finding& f, std::size_t backend_index, const BackendFactory& factory,
                      std::vector<std::unique_ptr<Backend>>& fresh, const RunOptions& run) {
  if (fresh.empty()) {
    auto made = factory();
    if (!made || made->size() <= backend_index) return true;  // nothing to compare with: keep the group
    fresh = std::move(*made);
  }
  Backend* one[] = {fresh[backend_index].get()};
  const CaseOutcome out = run_case(f.shrunk, one, run);
  return !out.backends.empty() && out.backends[0].verdict.kind == f.kind;
}

void run_worker(unsigned worker, std::vector<std::unique_ptr<Backend>>& owned, Shared& shared,
                const BackendFactory& factory, Clock::time_point deadline, Clock::time_point shrink_deadline) {
  const CampaignOptions& o = shared.options();
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  std::vector<std::unique_ptr<Backend>> fresh;
  std::vector<CaseRecord> records;
  for (std::uint64_t i = worker;; i += o.jobs) {
    if (shared.stop || stop_requested()) break;
    if (o.cases ? i >= *o.cases : Clock::now() >= deadline) break;
    SeededChoices choices(Rng::mix(o.seed, i));
    const Case c = generate_case(choices, o.gen);
    const CaseOutcome outcome = run_case(c, backends, o.run);
    if (stop_requested()) break;  // cut short by SIGINT/SIGTERM: its verdicts mean nothing
    if (outcome.skipped) ++shared.skipped;
    const std::string reference =
        outcome.rejection ? "rejects " + std::string(code_name(outcome.rejection->code)) : std::string("accepts");
    CaseRecord record;
    record.index = i;
    for (std::size_t b = 0; b < outcome.backends.size(); ++b) {
      const Verdict& v = outcome.backends[b].verdict;
      ++shared.count(b, v.kind);
      if (o.record_verdicts) record.labels.push_back(v.label());
      if (!is_failure(v.kind)) continue;
      ++shared.failures;
      const std::string pre =
          pre_shrink_signature(c, backend_family(outcome.backends[b].backend), v.label(), reference);
      if (!o.cases && v.kind == VerdictKind::timeout && Clock::now() >= deadline) {
        ++shared.unshrunk;  // its confirming re-run would be a second timeout past the budget
        if (!shared.pre_grouped(pre)) ++shared.unexamined;
        continue;
      }
      const Shared::Claim claim = shared.claim(pre);
      if (claim == Shared::Claim::counted) continue;
      if (claim == Shared::Claim::unshrunk) {
        ++shared.unshrunk;
        continue;
      }
      // With a time budget every shrink is capped at 10 s and all of them end at shrink_deadline.
      double max_seconds = 0;
      if (!o.cases && o.shrink.max_seconds == 0) {
        max_seconds = std::min(10.0, std::chrono::duration<double>(shrink_deadline - Clock::now()).count());
        if (max_seconds <= 0.01) {
          ++shared.unshrunk;
          ++shared.unexamined;  // claimed for shrinking: no group has this signature yet
          shared.release(pre);
          continue;
        }
      }
      auto f = shrink_finding(c, i, b, backends, v, shared, max_seconds, deadline);
      if (stop_requested()) {
        shared.release(pre);
        break;  // the shrink was cut short: nothing trustworthy to store
      }
      // Not for a hang: a fresh instance would cost a start-up and another whole timeout past the
      // budget, and the confirming re-run has just seen it hang again.
      if (f && f->kind != VerdictKind::timeout && !f->known && !shared.has_group(f->signature) &&
          !reproduces_fresh(*f, b, factory, fresh, o.run)) {
        f.reset();
      }
      if (f) {
        shared.add_finding(pre, std::move(*f));
      } else {
        ++shared.unconfirmed;
        shared.release(pre);
      }
    }
    ++shared.cases;
    if (o.record_verdicts) {
      record.name = case_file_name(c);
      records.push_back(std::move(record));
    }
  }
  shared.add_records(std::move(records));
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

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
  if (o.cases) {
    line += " | " + std::to_string(*o.cases - std::min(*o.cases, cases)) + " cases left";
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
    if (!f.store_error.empty()) *sink.out << "  not stored: " << f.store_error << "\n";
  }
}

/// Group signature → file, for every stored divergence under `o.known`: the signature of the stored
/// case on its `origin.backend`'s family with its recorded `origin.verdict` (replay checks that it
/// still reproduces). Cases without both fields are not divergences and are skipped.
std::map<std::string, std::filesystem::path> load_known(const CampaignOptions& o, std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const fs::path& p : o.known) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (it->is_regular_file(ec) && name.size() > 10 && name.ends_with(".case.json")) found.push_back(it->path());
    }
    if (ec) errors.push_back("cannot list " + p.string() + ": " + ec.message());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::map<std::string, fs::path> known;
  for (const fs::path& file : files) {
    auto c = read_case_file(file, o.run.limits);
    if (!c) {
      errors.push_back(render(c.error()));
      continue;
    }
    std::string backend, verdict;
    for (const auto& [k, v] : c->origin) {
      if (k == "backend") backend = v;
      if (k == "verdict") verdict = v;
    }
    if (backend.empty() || verdict.empty()) continue;
    known.emplace(group_signature(*c, backend_family(backend), verdict), file);
  }
  return known;
}

}  // namespace

std::size_t CampaignResult::new_groups() const {
  return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return !f.known; }));
}

Result<CampaignResult> run_campaign(const CampaignOptions& options, const BackendFactory& factory,
                                    ProgressSink progress) {
  if (options.jobs == 0) return make_diagnostic(Code::invalidArgument, "--jobs must be at least 1");
  if (options.seconds && !(*options.seconds > 0)) {
    return make_diagnostic(Code::invalidArgument, "--seconds must be a positive number");
  }
  if (options.gen.dtypes.empty()) return make_diagnostic(Code::invalidArgument, "no einsum dtype to generate");
  std::vector<std::vector<std::unique_ptr<Backend>>> owned;
  for (unsigned w = 0; w < options.jobs; ++w) {
    auto backends = factory();
    if (!backends) return std::move(backends).error();
    if (backends->empty()) return make_diagnostic(Code::invalidArgument, "no backend to fuzz");
    owned.push_back(std::move(*backends));
  }
  std::vector<std::string> names;
  for (const auto& b : owned[0]) names.emplace_back(b->name());

  Shared shared(options, names);
  std::vector<std::string> known_errors;
  std::size_t known_loaded = 0;
  if (!options.known.empty()) {
    auto known = load_known(options, known_errors);
    std::set<std::filesystem::path> files;
    for (const auto& [signature, file] : known) files.insert(file);
    known_loaded = files.size();
    shared.set_known(std::move(known));
  }
  const auto start = Clock::now();
  const double budget = options.seconds.value_or(60);
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget));
  const double grace = options.shrink_grace >= 0 ? options.shrink_grace : std::clamp(budget / 10, 2.0, 30.0);
  const auto shrink_deadline =
      deadline + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace));
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < options.jobs; ++w) {
    workers.emplace_back(run_worker, w, std::ref(owned[w]), std::ref(shared), std::cref(factory), deadline,
                         shrink_deadline);
  }
  std::atomic<bool> done{false};
  std::thread joiner([&] {
    for (auto& t : workers) t.join();
    done = true;
  });
  // Progress from this thread only, so findings and the progress line never interleave.
  bool line_open = false;
  auto last_print = start;
  auto last_line = start - std::chrono::hours(1);
  const auto interval = std::chrono::duration<double>(options.progress_interval);
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!progress.out) continue;
    print_findings(shared, progress, line_open);
    const auto now = Clock::now();
    if (now - last_print < interval) continue;
    last_print = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (progress.tty) {
      // A wrapped line could not be rewritten in place: cut it to the terminal's width.
      std::string line = progress_line(shared, elapsed);
      if (progress.width > 1 && line.size() >= progress.width) line.resize(progress.width - 1);
      *progress.out << "\r\033[K" << line << std::flush;
      line_open = true;
    } else if (now - last_line >= std::chrono::seconds(5)) {
      *progress.out << progress_line(shared, elapsed) << "\n" << std::flush;
      last_line = now;
    }
  }
  joiner.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (progress.out) {
    print_findings(shared, progress, line_open);
    if (line_open) *progress.out << "\r\033[K";
    *progress.out << progress_line(shared, elapsed) << "\n" << std::flush;
  }

  CampaignResult result;
  result.backends = names;
  result.cases = shared.cases;
  result.seconds = elapsed;
  result.failures = shared.failures;
  result.unshrunk = shared.unshrunk;
  result.skipped = shared.skipped;
  result.unconfirmed = shared.unconfirmed;
  result.unexamined = shared.unexamined;
  result.known_loaded = known_loaded;
  result.known_errors = std::move(known_errors);
  result.store_failures = shared.store_failures;
  result.stopped_by_signal = stop_requested();
  for (std::size_t b = 0; b < names.size(); ++b) {
    std::array<std::uint64_t, kVerdictKinds> row{};
    for (std::size_t k = 0; k < kVerdictKinds; ++k) row[k] = shared.count(b, static_cast<VerdictKind>(k));
    result.counts.push_back(row);
  }
  result.findings = shared.findings();
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.case_index < b.case_index; });
  result.records = shared.records();
  std::sort(result.records.begin(), result.records.end(),
            [](const CaseRecord& a, const CaseRecord& b) { return a.index < b.index; });
  return result;
}

}  // namespace einfuzz
