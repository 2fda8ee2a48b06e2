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
#include <sstream>
#include <thread>

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
  std::atomic<bool> stop{false};

  /// Takes one unit of the shrink budget of (backend, kind); false when it is spent.
  bool take_shrink_budget(const std::string& backend, VerdictKind kind) {
    std::lock_guard lock(mutex_);
    int& used = shrink_budget_[{backend, kind}];
    if (used >= options_.shrink_limit) return false;
    ++used;
    return true;
  }

  /// Records a finding unless its signature is known (then keeps the smaller case index).
  void add_finding(Finding&& f) {
    std::lock_guard lock(mutex_);
    const std::string signature = f.backend + '\n' + f.verdict + '\n' + f.file.filename().string();
    const auto it = by_signature_.find(signature);
    if (it != by_signature_.end()) {
      Finding& known = findings_[it->second];
      known.case_index = std::min(known.case_index, f.case_index);
      return;
    }
    if (options_.store) store(f);
    by_signature_[signature] = findings_.size();
    pending_messages_.push_back(findings_.size());
    findings_.push_back(std::move(f));
    if (options_.max_findings != 0 && findings_.size() >= options_.max_findings) stop = true;
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
      return;
    }
    if (std::filesystem::exists(f.file, ec)) return;  // the same case found earlier: keep its origin
    std::ofstream out(f.file, std::ios::binary);
    out << write_case(f.shrunk);
    if (!out) f.store_error = "cannot write " + f.file.string();
  }

  const CampaignOptions& options_;
  std::vector<std::string> backends_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::mutex mutex_;
  std::map<std::pair<std::string, VerdictKind>, int> shrink_budget_;
  std::map<std::string, std::size_t> by_signature_;
  std::vector<Finding> findings_;
  std::vector<std::size_t> pending_messages_;
  std::vector<CaseRecord> records_;
};

/// The shrunk finding, or nullopt when its shrunk case, re-run, is no longer a failing verdict of the
/// original kind (then nothing is stored: a stored case must reproduce).
std::optional<Finding> shrink_finding(const Case& generated, std::uint64_t index, std::size_t backend_index,
                                      Backend& backend, const Verdict& verdict, Shared& shared,
                                      Clock::time_point deadline) {
  const CampaignOptions& o = shared.options();
  Finding f;
  f.case_index = index;
  f.backend = std::string(backend.name());
  f.kind = verdict.kind;
  f.original_verdict = verdict.label();
  ShrinkOptions shrink = o.shrink;
  if (!o.cases && shrink.max_seconds == 0) {
    // Up to 10 s, and not much past the campaign's end: at least 1 s, so a late finding still shrinks.
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    shrink.max_seconds = std::clamp(left, 1.0, 10.0);
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
  f.shrunk.expect_error = final_outcome.rejection ? std::string(code_name(final_outcome.rejection->code)) : "";
  f.shrunk.origin = {{"seed", std::to_string(o.seed)},
                     {"case", std::to_string(index)},
                     {"generator", std::string(kGeneratorVersion)},
                     {"backend", f.backend},
                     {"verdict", f.verdict},
                     {"found", today_utc()}};
  f.file = o.corpus / case_file_name(f.shrunk);
  const std::string spec = backend_index < o.backend_specs.size() ? o.backend_specs[backend_index] : f.backend;
  f.reproduce = reproduce_command(f.file.string(), {o.command, {spec}, o.run, o.backend_options});
  return f;
}

void run_worker(unsigned worker, std::vector<std::unique_ptr<Backend>>& owned, Shared& shared,
                Clock::time_point deadline) {
  const CampaignOptions& o = shared.options();
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  std::vector<CaseRecord> records;
  for (std::uint64_t i = worker;; i += o.jobs) {
    if (shared.stop) break;
    if (o.cases ? i >= *o.cases : Clock::now() >= deadline) break;
    SeededChoices choices(Rng::mix(o.seed, i));
    const Case c = generate_case(choices, o.gen);
    const CaseOutcome outcome = run_case(c, backends, o.run);
    if (outcome.skipped) ++shared.skipped;
    CaseRecord record;
    record.index = i;
    for (std::size_t b = 0; b < outcome.backends.size(); ++b) {
      const Verdict& v = outcome.backends[b].verdict;
      ++shared.count(b, v.kind);
      if (o.record_verdicts) record.labels.push_back(v.label());
      if (!is_failure(v.kind)) continue;
      ++shared.failures;
      if (!shared.take_shrink_budget(outcome.backends[b].backend, v.kind)) {
        ++shared.unshrunk;
        continue;
      }
      if (auto f = shrink_finding(c, i, b, *backends[b], v, shared, deadline)) {
        shared.add_finding(std::move(*f));
      } else {
        ++shared.unconfirmed;
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
    *sink.out << "found: " << f.backend << " " << f.verdict << " (case " << f.case_index << ", shrunk in "
              << f.shrink_steps << " steps) -> " << f.file.string() << "\n  reproduce: " << f.reproduce << "\n";
    if (!f.store_error.empty()) *sink.out << "  not stored: " << f.store_error << "\n";
  }
}

}  // namespace

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
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.seconds.value_or(60)));
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < options.jobs; ++w) {
    workers.emplace_back(run_worker, w, std::ref(owned[w]), std::ref(shared), deadline);
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
