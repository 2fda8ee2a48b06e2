// Judges a backend's result against the reference (ORACLE.md: the ordered oracle).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/tensor.hpp"
#include "einfuzz/harness/verdict.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz {

struct OrderedJudgeOptions {
  bool strict_nan_payload = false;  ///< compare NaN payloads and signs too (default: "is NaN")
};

/// Ordered oracle: every element must have the reference's bit pattern (NaNs compared as "is NaN"
/// unless strict). Shape or dtype differences are `mismatch(shape)`; otherwise the first differing
/// element is reported with both values as hex-float and decimal.
Verdict judge_ordered(const Tensor& expected, const Tensor& actual, const OrderedJudgeOptions& options = {});

struct AnyOrderJudgeOptions {
  bool factoring = true;            ///< the backend may factor sums out of products (ORACLE.md §3)
  bool strict_signed_zero = false;  ///< a wrong zero sign is a mismatch, not a note
};

/// Any-order oracle (ORACLE.md §1–§3, §6): each element against the multiset truth — the
/// enclosure for finite classes, the special-value class otherwise, +0 for empty contractions.
/// The aggregated verdict is the worst element's; counts of indeterminate and noted elements
/// are kept. `actual` must have the truth's dtype and shape (else `mismatch(shape)`).
Verdict judge_any_order(const reference::MultisetEinsum& truth, const Tensor& actual,
                        const AnyOrderJudgeOptions& options = {});

/// Any-order oracle for float reductions (ORACLE.md §4–§5): sum/mean/prod against their enclosures,
/// min/max against the fibre extreme selected by the backend's NaN `profile` (propagate or
/// ignore; an `ordered` backend is judged bitwise instead).
Verdict judge_any_order(const reference::MultisetReduce& truth, const Tensor& actual, NanProfile profile,
                        bool strict_signed_zero = false);

/// What the any-order judge accepts for one output element — every result it does not call a
/// failure (pass, indeterminate, note) — as data a reproducer can embed (`einfuzz repro`): a set of
/// special results plus at most one closed interval of finite values, both read off the same
/// truth the judge reads. Elements of an empty contraction accept [0, 0]; min/max accept the
/// fibre's extreme only (an infinite extreme as its special result).
struct AcceptedSet {
  enum class Finite { none, any, interval };
  bool nan = false;                 ///< a NaN result (any payload) is accepted
  bool pos_inf = false;             ///< +Inf is accepted
  bool neg_inf = false;             ///< -Inf is accepted
  Finite finite = Finite::none;     ///< which finite results are accepted
  reference::Dyadic low, high;      ///< interval: low/divisor <= r <= high/divisor, exactly
  std::int64_t divisor = 1;         ///< mean's n, else 1
  /// Set when a zero result must have this sign (true: -0); otherwise either sign of zero passes.
  std::optional<bool> zero_negative;
  std::string why;                  ///< the rule that decided it, in words, e.g. "empty contraction"

  /// True when the judge accepts `r` here (a float or double result, passed exactly as a double).
  bool contains(double r) const;
};

/// Per output element (row-major), what judge_any_order(truth, ·, options) accepts: it returns a
/// non-failure verdict exactly when the result has the truth's dtype and shape and every element
/// lies in its set.
std::vector<AcceptedSet> accepted_sets(const reference::MultisetEinsum& truth, const AnyOrderJudgeOptions& options = {});

/// The same for a float reduce judged by judge_any_order(truth, ·, profile, strict_signed_zero).
std::vector<AcceptedSet> accepted_sets(const reference::MultisetReduce& truth, NanProfile profile,
                                       bool strict_signed_zero = false);

/// "0x1.8p+1 (3)" — the CASES.md spelling followed by the shortest round-trip decimal.
std::string describe_value(const Tensor& t, std::int64_t flat_index);

/// An exact dyadic as a hex float of arbitrary precision: "0x1.8000000000000000001p-3", "0x0p+0".
std::string dyadic_hex(const reference::Dyadic& x);

/// x / divisor exactly, for a report: the hex float of x (followed by " / divisor" unless it is 1)
/// and the quotient to 21 significant decimal digits in parentheses.
std::string exact_text(const reference::Dyadic& x, std::int64_t divisor = 1);

}  // namespace einfuzz
