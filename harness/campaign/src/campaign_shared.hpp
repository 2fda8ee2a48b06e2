// The state a campaign's workers and its progress thread share (campaign.cpp), and the progress
// output that reads it (campaign_progress.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einfuzz/core/atomic_write.hpp"
#include "einfuzz/harness/campaign.hpp"
#include "einfuzz/harness/group.hpp"

namespace einfuzz::campaign_detail {

/// Writes `c` to `file` under options.corpus, complete or not at all (a full disk must not leave a
/// truncated file that blocks the finding); an existing readable case file of that name is the same
/// case found earlier and is kept with its origin, a damaged one replaced. Returns the I/O error.
inline std::string store_case_file(const Case& c, const std::filesystem::path& file, const CampaignOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.corpus, ec);
  if (ec) return "cannot create " + options.corpus.string() + ": " + ec.message();
  const std::string text = write_case(c);
  std::string error = write_file_atomically(file.string(), text, /*no_replace=*/true);
  if (!error.empty() && std::filesystem::exists(file, ec)) {
    if (read_case_file(file, options.run.limits)) return "";  // the same case found earlier: keep its origin
    // A damaged file of that name (e.g. cut short by an older build on a full disk): replace it.
    error = write_file_atomically(file.string(), text);
  }
  return error;
}

/// State shared by the workers and the progress thread.
class Shared {
 public:
  Shared(const CampaignOptions& options, std::vector<std::string> backends)
      : options_(options), backends_(std::move(backends)),
        counts_(std::make_unique<std::atomic<std::uint64_t>[]>(backends_.size() * kVerdictKinds)),
        bins_(std::make_unique<std::atomic<std::uint64_t>[]>(backends_.size() * kErrorBins)) {
    for (std::size_t i = 0; i < backends_.size() * kVerdictKinds; ++i) counts_[i] = 0;
    for (std::size_t i = 0; i < backends_.size() * kErrorBins; ++i) bins_[i] = 0;
  }

  const CampaignOptions& options() const { return options_; }
  const std::vector<std::string>& backends() const { return backends_; }
  std::atomic<std::uint64_t>& count(std::size_t backend, VerdictKind kind) {
    return counts_[backend * kVerdictKinds + static_cast<std::size_t>(kind)];
  }
  /// Backend `backend`'s count in error bin `bin` (Verdict::error_bins summed).
  std::atomic<std::uint64_t>& error_bin(std::size_t backend, std::size_t bin) {
    return bins_[backend * kErrorBins + bin];
  }
  std::atomic<std::uint64_t> cases{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> unshrunk{0};
  std::atomic<std::uint64_t> skipped{0};
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
      Finding& group = findings_[by_signature_.at(p.group)];
      ++group.count;
      ++group.pre_shrink[p.share].count;
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
    const PreShrinkShare share{pre, f.case_index, count};
    const auto it = by_signature_.find(f.signature);
    if (it != by_signature_.end()) {
      Finding& group = findings_[it->second];
      group.case_index = std::min(group.case_index, f.case_index);
      group.count += count;
      p.share = group.pre_shrink.size();
      group.pre_shrink.push_back(share);
      for (const std::string& b : f.backends) {
        if (std::find(group.backends.begin(), group.backends.end(), b) == group.backends.end()) group.backends.push_back(b);
      }
      std::sort(group.backends.begin(), group.backends.end(), [&](const std::string& a, const std::string& b) {
        return backend_order(a) < backend_order(b);
      });
      return;
    }
    f.count = count;
    p.share = f.pre_shrink.size();
    f.pre_shrink.push_back(share);
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

  /// The stored divergences whose signature is of `kind` (signature_kind), at most `most`, in
  /// signature order (read-only once workers run).
  std::vector<std::filesystem::path> known_of_kind(std::string_view kind, std::size_t most) const {
    std::vector<std::filesystem::path> out;
    for (const auto& [signature, file] : known_) {
      if (out.size() < most && signature_kind(signature) == kind) out.push_back(file);
    }
    return out;
  }

  std::vector<Finding> take_new_findings() {
    std::lock_guard lock(mutex_);
    std::vector<Finding> out;
    for (std::size_t i : pending_messages_) out.push_back(findings_[i]);
    pending_messages_.clear();
    return out;
  }

  /// The groups so far: {new, known} (the progress line shows them).
  std::pair<std::size_t, std::size_t> group_counts() {
    std::lock_guard lock(mutex_);
    const auto known = static_cast<std::size_t>(
        std::count_if(findings_.begin(), findings_.end(), [](const Finding& f) { return f.known; }));
    return {findings_.size() - known, known};
  }

  std::vector<Finding> findings() {
    std::lock_guard lock(mutex_);
    return findings_;
  }

  /// A shrunk failure of `backend` that did not fail again (CampaignResult::unconfirmed).
  void add_unconfirmed(const std::string& backend) {
    std::lock_guard lock(mutex_);
    ++unconfirmed_by_backend_[backend];
  }
  std::map<std::string, std::uint64_t> unconfirmed_by_backend() {
    std::lock_guard lock(mutex_);
    return unconfirmed_by_backend_;
  }

  void add_records(std::vector<CaseRecord>&& records) {
    std::lock_guard lock(mutex_);
    for (CaseRecord& r : records) records_.push_back(std::move(r));
  }
  std::vector<CaseRecord> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

  /// A late fault of backend `b` (LateFault), the campaign's case `index` when known.
  void add_late(std::size_t b, LateFault&& late, std::optional<std::uint64_t> index) {
    std::lock_guard lock(mutex_);
    Late& l = late_[b];
    if (l.count++ == 0) {
      l.first = std::move(late);
      l.index = index;
    }
  }
  /// Per backend with late faults: their count, the first one and its case index.
  struct Late {
    std::uint64_t count = 0;
    LateFault first;
    std::optional<std::uint64_t> index;
  };
  std::map<std::size_t, Late> late() {
    std::lock_guard lock(mutex_);
    return late_;
  }

 private:
  void store(Finding& f) {
    f.store_error = store_case_file(f.shrunk, f.file, options_);
    if (!f.store_error.empty()) ++store_failures;
  }

  const CampaignOptions& options_;
  std::vector<std::string> backends_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> bins_;
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> unconfirmed_by_backend_;
  /// One pre-shrink signature: its shrinks so far, and the group its failures belong to.
  struct PreShrink {
    int shrinks = 0;
    bool in_progress = false;
    std::uint64_t pending = 0;  ///< failures met while its shrink was in progress
    std::string group;          ///< the group signature, once a shrink was confirmed
    std::size_t share = 0;      ///< then its entry in that group's pre_shrink
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
  std::map<std::size_t, Late> late_;
};

/// The one-line progress report: cases, rate, per-backend counts, what is left.
std::string progress_line(Shared& shared, double elapsed);

/// Prints the findings not printed yet, first ending an open progress line.
void print_findings(Shared& shared, ProgressSink sink, bool& line_open);

}  // namespace einfuzz::campaign_detail
