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
#include "einfuzz/core/text.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "campaign_shared.hpp"
#include "case_files.hpp"

namespace einfuzz {

GenOptions campaign_gen_options() {
  GenOptions options;
  options.long_axis_percent = 4;
  // f16 and bf16 too (issue 14): a backend that does not declare them answers `unsupported`.
  options.dtypes.push_back(DType::f16);
  options.dtypes.push_back(DType::bf16);
  options.reduce.dtypes.push_back(DType::f16);
  options.reduce.dtypes.push_back(DType::bf16);
  // Strided views of the inputs for backends declaring `strided_inputs` (numpy, torch, plugins);
  // the others are sent dense values as before.
  options.layout_percent = 10;
  return options;
}

namespace {

using Clock = std::chrono::steady_clock;
using campaign_detail::print_findings;
using campaign_detail::progress_line;
using campaign_detail::Shared;

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

/// How a finding that --no-store kept out of the corpus is reproduced: no case file exists, so the
/// command reruns its campaign case alone (`--cases i+1 --shard i/(i+1)`: case i of the seed, which
/// depends only on the seed, i and the generation options) on its backend, with the options that
/// decide the case, its shrink, its group and its verdict; that run finds, shrinks and groups it again.
std::string rerun_command(const CampaignOptions& o, std::uint64_t index, const std::string& spec) {
  std::string out = o.command + " fuzz --backend " + shell_quote(spec) + " --seed " + std::to_string(o.seed) +
                    " --cases " + std::to_string(index + 1) + " --shard " + std::to_string(index) + "/" +
                    std::to_string(index + 1);
  if (!o.dtypes.empty()) out += " --dtypes " + shell_quote(o.dtypes);
  const GenOptions defaults = campaign_gen_options();
  for (const auto& [flag, member] : {std::pair{"--invalid-percent", &GenOptions::invalid_percent},
                                     std::pair{"--reduce-percent", &GenOptions::reduce_percent},
                                     std::pair{"--vjp-percent", &GenOptions::vjp_percent},
                                     std::pair{"--layout-percent", &GenOptions::layout_percent}}) {
    if (o.gen.*member != defaults.*member) out += std::string(" ") + flag + " " + std::to_string(o.gen.*member);
  }
  if (o.shrink.max_attempts != ShrinkOptions{}.max_attempts) {
    out += " --max-shrink-attempts " + std::to_string(o.shrink.max_attempts);
  }
  // The same stored divergences: whether the group is known depends on them.
  for (const auto& k : o.known) out += " --known " + shell_quote(k.string());
  for (const std::string& arg : verdict_option_args(o.run, o.backend_options)) out += " " + arg;
  return out + " --no-store";
}

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
  f.first = final_verdict.first;
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
  if (!o.dtypes.empty()) f.shrunk.origin.insert(f.shrunk.origin.begin() + 3, {"dtypes", o.dtypes});
  f.file = o.corpus / case_file_name(f.shrunk);
  if (auto known = shared.known_file(f.signature)) {
    f.known = true;
    f.known_file = *known;
    f.file = *known;
  } else {
    f.resembles = shared.known_of_kind(signature_kind(f.signature), 3);
  }
  const std::string spec = backend_index < o.backend_specs.size() ? o.backend_specs[backend_index] : f.backend;
  // A known group's file is the stored divergence; a new one's exists only when the campaign stores.
  f.reproduce = o.store || f.known ? reproduce_command(f.file.string(), {o.command, {spec}, o.run, o.backend_options})
                                   : rerun_command(o, index, spec);
  return f;
}

/// True when `f`'s shrunk case fails the same way on a fresh instance of its backend: a divergence
/// that depends on what the backend process ran before (numpy reading memory behind an empty
/// operand) would not reproduce with the printed command. A new set of backends for every new
/// group: an instance kept for the next group would have run this group's case, the state a
/// printed command does not start from (a plugin right on its first call only confirmed every
/// group after the first).
bool reproduces_fresh(const Finding& f, std::size_t backend_index, const BackendFactory& factory,
                      const RunOptions& run) {
  auto made = factory();
  if (!made || made->size() <= backend_index) return true;  // nothing to compare with: keep the group
  Backend* one[] = {(*made)[backend_index].get()};
  const CaseOutcome out = run_case(f.shrunk, one, run);
  return !out.backends.empty() && out.backends[0].verdict.kind == f.kind;
}

void run_worker(unsigned worker, std::vector<std::unique_ptr<Backend>>& owned, Shared& shared,
                const BackendFactory& factory, Clock::time_point deadline, Clock::time_point shrink_deadline) {
  const CampaignOptions& o = shared.options();
  std::vector<Backend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  std::vector<CaseRecord> records;
  // This worker's last cases, newest first: a late fault belongs to one its backends answered, or
  // (a fault of the hello) to the case just run, on which it surfaced.
  std::vector<std::pair<std::uint64_t, Case>> recent;
  const auto take_late = [&](const Case* current, std::uint64_t current_index) {
    for (std::size_t b = 0; b < backends.size(); ++b) {
      for (LateFault& late : backends[b]->take_late_faults()) {
        std::optional<std::uint64_t> index;
        if (late.late_case) {
          const std::string name = case_file_name(*late.late_case);
          if (current && case_file_name(*current) == name) index = current_index;
          for (const auto& [i, c] : recent) {
            if (index) break;
            if (case_file_name(c) == name) index = i;
          }
        }
        shared.add_late(b, std::move(late), index);
      }
    }
  };
  // The shard's k-th case is i = shard + k·shards; worker w takes k = w, w + jobs, … (checked
  // against `cases` before the multiplication can overflow).
  for (std::uint64_t k = worker;; k += o.jobs) {
    if (shared.stop || stop_requested()) break;
    if (o.cases ? k >= shard_case_count(*o.cases, o.shard, o.shards) : Clock::now() >= deadline) break;
    const std::uint64_t i = o.shard + k * o.shards;
    SeededChoices choices(Rng::mix(o.seed, i));
    Case c = generate_case(choices, o.gen);
    const CaseOutcome outcome = run_case(c, backends, o.run);
    if (stop_requested()) break;  // cut short by SIGINT/SIGTERM: its verdicts mean nothing
    take_late(&c, i);
    if (outcome.skipped) ++shared.skipped;
    const std::string reference =
        outcome.rejection ? "rejects " + std::string(code_name(outcome.rejection->code)) : std::string("accepts");
    CaseRecord record;
    record.index = i;
    for (std::size_t b = 0; b < outcome.backends.size(); ++b) {
      const Verdict& v = outcome.backends[b].verdict;
      ++shared.count(b, v.kind);
      for (std::size_t bin = 0; bin < kErrorBins; ++bin) {
        if (v.error_bins[bin] != 0) shared.error_bin(b, bin) += v.error_bins[bin];
      }
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
          !reproduces_fresh(*f, b, factory, o.run)) {
        f.reset();
      }
      if (f) {
        shared.add_finding(pre, std::move(*f));
      } else {
        shared.add_unconfirmed(outcome.backends[b].backend);
        shared.release(pre);
      }
    }
    ++shared.cases;
    if (o.record_verdicts) {
      record.name = case_file_name(c);
      records.push_back(std::move(record));
    }
    recent.insert(recent.begin(), {i, std::move(c)});
    if (recent.size() > 2) recent.pop_back();
  }
  // What the backends still send for the last cases before they exit (PROTOCOL A §5).
  if (!stop_requested()) {
    for (Backend* b : backends) b->finish();
    take_late(nullptr, 0);
  }
  shared.add_records(std::move(records));
}

/// The report of backend `b`'s late faults, its first one's case stored (unless --no-store) with the
/// command that reproduces it: `check` tells the backend bye after the case and charges what it
/// still sends to it.
LateFaultReport late_report(std::size_t b, Shared::Late&& late, const CampaignOptions& o, const std::string& name) {
  LateFaultReport r;
  r.backend = name;
  const std::string spec = b < o.backend_specs.size() ? o.backend_specs[b] : name;
  r.count = late.count;
  r.case_index = late.index;
  r.evidence = late.first.fault.evidence;
  r.late_case = std::move(late.first.late_case);
  if (!r.late_case) return r;
  Case& c = *r.late_case;
  c.expect_error.reset();
  c.origin = {{"seed", std::to_string(o.seed)}};
  if (r.case_index) c.origin.emplace_back("case", std::to_string(*r.case_index));
  c.origin.emplace_back("generator", std::string(kGeneratorVersion));
  c.origin.emplace_back("backend", r.backend);
  c.origin.emplace_back("verdict", "crash");
  c.origin.emplace_back("found", today_utc());
  c.origin.emplace_back("note", "a message after the complete answer: " + r.evidence);
  r.file = o.corpus / case_file_name(c);
  if (o.store) r.store_error = campaign_detail::store_case_file(c, r.file, o);
  r.reproduce = o.store || !r.case_index
                    ? reproduce_command(r.file.string(), {o.command, {spec}, o.run, o.backend_options})
                    : rerun_command(o, *r.case_index, spec);
  return r;
}

}  // namespace

std::size_t CampaignResult::new_groups() const {
  return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return !f.known; }));
}

std::uint64_t shard_case_count(std::uint64_t cases, std::uint64_t shard, std::uint64_t shards) {
  if (shards == 0 || shard >= cases) return 0;
  return (cases - shard - 1) / shards + 1;
}

Result<CampaignResult> run_campaign(const CampaignOptions& options, const BackendFactory& factory,
                                    ProgressSink progress) {
  if (options.jobs == 0) return make_diagnostic(Code::invalidArgument, "--jobs must be at least 1");
  if (options.shards == 0 || options.shard >= options.shards) {
    return make_diagnostic(Code::invalidArgument, "--shard K/N needs 0 <= K < N (got " + std::to_string(options.shard) +
                                                      "/" + std::to_string(options.shards) + ")");
  }
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
    KnownDivergences known = load_known_divergences(options.known, options.run, known_errors);
    known_loaded = known.files;
    shared.set_known(std::move(known.signatures));
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
  // The report's cases-per-second curve: the case count at every progress tick, printed or not.
  std::vector<std::pair<double, std::uint64_t>> samples{{0.0, 0}};
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (progress.out) print_findings(shared, progress, line_open);
    const auto now = Clock::now();
    if (now - last_print < interval) continue;
    last_print = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    samples.emplace_back(elapsed, shared.cases.load());
    if (!progress.out) continue;
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
  result.unconfirmed_by_backend = shared.unconfirmed_by_backend();
  for (const auto& [backend, n] : result.unconfirmed_by_backend) result.unconfirmed += n;
  result.unexamined = shared.unexamined;
  result.known_loaded = known_loaded;
  result.known_errors = std::move(known_errors);
  result.store_failures = shared.store_failures;
  result.stopped_by_signal = stop_requested();
  for (std::size_t b = 0; b < names.size(); ++b) {
    std::array<std::uint64_t, kVerdictKinds> row{};
    for (std::size_t k = 0; k < kVerdictKinds; ++k) row[k] = shared.count(b, static_cast<VerdictKind>(k));
    result.counts.push_back(row);
    std::array<std::uint64_t, kErrorBins> bins{};
    for (std::size_t k = 0; k < kErrorBins; ++k) bins[k] = shared.error_bin(b, k);
    result.error_bins.push_back(bins);
    result.any_order.push_back(owned[0][b]->capabilities().semantics == Semantics::any_order);
  }
  samples.emplace_back(elapsed, shared.cases.load());
  result.progress_samples = std::move(samples);
  result.findings = shared.findings();
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.case_index < b.case_index; });
  for (auto& [b, late] : shared.late()) {
    result.late_faults.push_back(late_report(b, std::move(late), options, names[b]));
    if (!result.late_faults.back().store_error.empty()) ++result.store_failures;  // as a finding's (exit 3)
  }
  result.records = shared.records();
  std::sort(result.records.begin(), result.records.end(),
            [](const CaseRecord& a, const CaseRecord& b) { return a.index < b.index; });
  return result;
}

}  // namespace einfuzz
