// Group signatures (docs/fuzzing.md, "Groups"): what makes two shrunk failures one root cause, the
// cheaper pre-shrink signature that decides whether a generated failure may be new, and the
// canonical spelling of a pattern that both of them and the shrinker's last step use.
#pragma once

#include <string>
#include <string_view>

#include "einfuzz/core/case.hpp"

namespace einfuzz {

/// The i-th canonical name: `a` … `z`, `A` … `Z`, then `a1`, `a2`, … (identifiers that never end
/// with `_`).
std::string canonical_name(std::size_t i);

/// `pattern` with its names renamed in first-appearance order (`a` … `z`, `A` … `Z`, then `a1`,
/// `a2`, …) and canonical spacing (`a b, b -> a`; groups as `(a b)`); anonymous axes, unit axes
/// and ellipses are kept as written. A pattern the parser rejects keeps its spacing and only its
/// identifier words are renamed, so the parse error stays where it was.
std::string canonical_pattern(Op op, std::string_view pattern);

/// `c` with canonical_pattern and its supplied-length names renamed consistently (a supplied name
/// absent from the pattern gets the next fresh name); inputs, values and `origin` unchanged.
Case canonical_names(const Case& c);

/// An einsum with its operands (pattern, inputs and layouts together) stably sorted by rank, then
/// shape, descending (`, a ->` on `(), (0)` becomes `a, ->` on `(0), ()`); other cases unchanged.
/// Not a semantic identity for ordered backends: the shrinker keeps it only when the verdict does.
Case canonical_operand_order(const Case& c);

/// The special input values that occur, in a fixed order, comma-separated, or "none": `nan`,
/// `+inf`, `-inf`, `-0`, `subnormal`, `near-max` (finite, in the top binade: |x| ≥ Ω/2) for floats;
/// `int-min`, `int-max` for integers.
std::string special_values(const Case& c);

/// Each input's shape with every length written 0, 1 or n, e.g. "(0,n),(1),()".
std::string length_classes(const Case& c);

/// The verdict of an element whose contraction has no term and whose result is not ±0 (ORACLE §1).
inline constexpr std::string_view kEmptyContractionLabel = "mismatch(special: empty-contraction)";
/// The last field of a prod VJP mismatch's signature when the division explains it (group_signature).
inline constexpr std::string_view kProdFibreLeavesRange =
    "a fibre holds 0, inf or NaN or a sub-product that can overflow or underflow";
/// The verdict of a backend that could not be started (Verdict::label of kStartReason): its group
/// signature is `family | crash(start)` alone, since no case caused it.
inline constexpr std::string_view kStartFailureLabel = "crash(start)";
/// The verdict of a backend whose hello did not come within its timeout: grouped as kStartFailureLabel.
inline constexpr std::string_view kStartTimeoutLabel = "timeout(start)";
/// Whether `verdict_label` is a start failure's (crash(start) or timeout(start)).
inline bool is_start_label(std::string_view verdict_label) {
  return verdict_label == kStartFailureLabel || verdict_label == kStartTimeoutLabel;
}
/// The verdict of a case one side rejects and the other accepts (ORACLE §6).
inline constexpr std::string_view kRejectDisagreeLabel = "reject-disagree";

/// The group signature of a shrunk failure: `family | verdict label | op[/reduction] | dtype |
/// canonical pattern | length classes | special values[ | strided[ reversed][ expanded]]`. Two
/// failures with equal signatures are one group (one root cause); `family` is the backend's library
/// family (backend_family), so the variants of one library share their groups. The last field is
/// there only when the shrunk case still has input layouts (the shrinker tries it without them
/// first): the failure needs a strided view, `reversed` when some view has a negative stride and
/// `expanded` a stride 0, on an axis longer than 1.
///
/// A backend that could not be started (`crash(start)`: its spawn or hello failed; `timeout(start)`:
/// its hello did not come in time) has the signature `family | crash(start)` (or `| timeout(start)`):
/// every case it is given fails alike, and its pre-shrink signature is as coarse, so it is shrunk once.
///
/// An empty contraction's signature is `family | verdict label | op` alone. Its value is +0 on every
/// path, so a library that returns anything else computes where there is nothing to compute; the
/// shrunk case's dtype, pattern, lengths and values only say what exposed it on one path (an
/// infinity or an overflowing product multiplied by the empty sum, a read behind the empty
/// operand), and the greedy shrinker stops on a different one from nearly every starting case: they
/// were 57 of the 59 new groups that seeds 2–9 of the default campaign met in 20000 cases each, every
/// one a stored root cause.
///
/// A reject-disagree's signature is keyed by what the semantics says of the case, not by its
/// pattern: `family | reject-disagree | op | the semantics rejects: CODE` (the library accepts what
/// SEMANTICS §2 rejects with CODE, whatever the dtype: numpy's unchecked repeated label), or
/// `family | reject-disagree | op | dtype | the semantics accepts | [no ]zero-length` (the library
/// refuses a valid case: torch's int32 sums meet int32 operands in a mixed-type kernel once an axis
/// is empty, in six operand arrangements so far, each a new group before).
///
/// A mismatch of a prod VJP where some fibre holds ±0, ±inf or NaN, or is not certified by
/// ORACLE §5's prod row (Π max(1,|x|)·(1+u)^n ≥ Ω or Π min(1,|x|) < 2^emin·(1+u)^n: some
/// sub-product, in some order, can overflow or underflow) is `family | mismatch | vjp-reduce/prod |
/// a fibre holds 0, inf or NaN or a sub-product that can overflow or underflow`, whatever its
/// verdict's detail, dtype, pattern or values. There a backend that computes g·(Π/x_p) instead of
/// the leave-one-out product can fail (ORACLE §7 names the NaN, Inf and 0 it returns; a subnormal
/// Π also loses the bits a `value` mismatch shows). Everywhere else its computed Π is within
/// (1+u)^(n−1) of the exact one and the division's n + 1 roundings are inside §7's bound, so it
/// cannot fail there, and a mismatch there keeps the full signature: another cause. Torch's
/// `prod_backward` divides: its failures came as four verdict details over dtypes, patterns and
/// value classes, 17 stored groups, and VJP-heavy campaigns kept meeting new ones. A second
/// prod-VJP bug of one library that shows only on such fibres would join this group.
std::string group_signature(const Case& shrunk, std::string_view family, std::string_view verdict_label);

/// A group signature's kind: its first four fields, `family | verdict label | op[/reduction] |
/// dtype` (all of it when it has fewer). Groups of one kind that differ in pattern, lengths or
/// special values may be one root cause; the campaign names the stored divergences of a new group's
/// kind beside it, for whoever checks it against the library. Not a match: a new group stays new.
std::string_view signature_kind(std::string_view signature);

/// The cheap signature of a generated (unshrunk) failure: `backend | verdict label | op[/reduction]
/// | dtype | the reference's conclusion | whether some input length is 0 | whether NaN and ±Inf
/// occur[ | strided]`, the last when the case has input layouts. The campaign shrinks the first failure of each new pre-shrink signature.
std::string pre_shrink_signature(const Case& generated, std::string_view backend, std::string_view verdict_label,
                                 std::string_view reference);

}  // namespace einfuzz
