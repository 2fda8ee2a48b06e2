// The checker's view of a whole case: its inputs against its dtype and the limits, then its
// pattern (einsum or reduce), giving the checked einsum or reduce every layer above works from.
#pragma once

#include <memory>
#include <variant>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// A case after checking: an einsum or a reduce.
using CheckedCase = std::variant<CheckedEinsum, CheckedReduce>;

/// The checker's view of a case: the inputs agree with the pattern, dtype and limits, or the first
/// diagnostic (SEMANTICS §2.2 for einsum, §2.3 for reduce; `unsupportedDtype` for a bool einsum).
/// A VJP case is its forward case checked first, then `notDifferentiable` (any/all, or a
/// non-floating dtype), the cotangent's size limit, `invalidArgument` (its dtype) and
/// `cotangentShapeMismatch` (its shape is not the forward output's). The checked case is the
/// forward one.
Result<CheckedCase> check_case(const Case& c, const Limits& limits);

/// No answer to `c` has more dimensions than this: 64, the inputs' ranks together (an einsum's output
/// has at most its distinct labels; a VJP answers the inputs' shapes) or the pattern's length (a
/// reduce's output has at most one dimension per item), whichever is largest. What a backend's
/// answer is checked against before a rank it announces sizes anything.
std::size_t answer_rank_bound(const Case& c);

/// check_case's result, shared instead of copied: the last call's on this thread when `c` has the
/// same pattern, dtype, reduction, axis lengths, input and cotangent shapes and dtypes, and
/// `limits` are the same (a campaign checks each case in the run boundary and again in in-process
/// backends). Never null.
std::shared_ptr<const Result<CheckedCase>> check_case_shared(const Case& c, const Limits& limits);

/// check_case_shared's last result on this thread when `c` and `limits` are what it was called
/// with, else null; checks nothing. An accepted case's checked einsum or reduce is the value
/// check_einsum or check_reduce gives for its pattern and input shapes under `limits`, so an
/// adapter takes it from here instead of checking the case again.
std::shared_ptr<const Result<CheckedCase>> check_case_memoised(const Case& c, const Limits& limits);

/// Drops this thread's memoised results of check_case, check_einsum and check_reduce (results
/// already handed out live on); the next call checks again. The libFuzzer targets call it after
/// each input, so that an input frees what it allocated: libFuzzer runs an input a second time,
/// looking for a leak, whenever it allocated more blocks than it freed, and a memo holding this
/// input's result in place of the last one's made that true of many inputs: under ASan + UBSan,
/// fuzz_einsum_diff's second runs took 13% as much time as its first runs with the memos kept,
/// 5% with them released (docs/performance.md).
void release_check_memos() noexcept;

}  // namespace einfuzz
