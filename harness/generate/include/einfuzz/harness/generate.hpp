// The one case generator, drawing every choice from a ChoiceSource (seeded, libFuzzer bytes or
// enumeration): einsums (1–6 operands, 0–6 labels each, multi-character names, repeated labels,
// ellipses of different ranks, scalar operands and outputs), reduces (compositions, anonymous
// factors, unit axes, every kind), shapes biased towards 0 and 1 with every broadcasting combination,
// every dtype, values from mixtures with IEEE edge values, and a set share of deliberately invalid
// cases. Shared by the RapidCheck properties, the fuzz targets and `einfuzz fuzz`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/choice.hpp"

namespace einfuzz {

/// Written into every stored case's `origin` (bump it when the same choices draw different cases).
inline constexpr std::string_view kGeneratorVersion = "einfuzz-gen/5";  // 3: f16/bf16 in campaigns; 4: invalid VJP cases keep to --dtypes; 5: input layouts

/// Which reduce constructs generate_reduce may use. Every case it draws passes check_reduce.
struct ReduceGenOptions {
  bool composite = true;              ///< groups `(a b)` on both sides (and `(...)` on the right)
  bool anonymous = true;              ///< anonymous factors `2`, `3` on the left (always reduced)
  bool units = true;                  ///< `1`, `()`, `(1)` on both sides and `1` inside groups
  bool ellipsis = true;               ///< a bare left ellipsis covering 0–2 dimensions
  bool zero_lengths = true;           ///< axes of length 0 (never reduced for mean/min/max)
  int max_axes = 5;                   ///< named axes on the left
  std::int64_t max_length = 4;        ///< longest named or ellipsis axis
  std::int64_t max_elements = 4096;   ///< cap on the input's element count
  std::optional<Reduction> kind;      ///< force a kind (the dtype is then drawn among its valid ones)
  std::optional<DType> dtype;         ///< force a dtype (must be valid for the kind)
  /// The dtypes drawn (each kind draws among those it accepts, in this order; kinds that accept
  /// none of them are not drawn). Must leave some kind a dtype.
  std::vector<DType> dtypes = {DType::f64, DType::f32, DType::i64, DType::i32, DType::boolean};
};

/// Bounds of the generator; they keep the reference's materialisation small.
struct GenOptions {
  int max_operands = 6;                 ///< 1..max_operands operands
  int max_axes_per_operand = 6;         ///< named items per operand (ellipsis not counted)
  std::int64_t max_length = 5;          ///< axis lengths drawn from 0..max_length, biased to 0, 1, 2
  std::int64_t max_global = 4096;       ///< bound on output size × contraction size (zero lengths as 1)
  /// Percent of einsums with one long axis (up to max_global), so contractions reach thousands of
  /// terms. Off by default (the property tests budget for short ones); the campaign turns it on.
  int long_axis_percent = 0;
  /// Einsum dtypes (never bool: einsum has none). Empty: every case is a reduce. The campaign adds
  /// f16 and bf16 (campaign_gen_options); the property tests' default leaves them out.
  std::vector<DType> dtypes = {DType::f32, DType::f64, DType::i32, DType::i64};
  ReduceGenOptions reduce;              ///< generate_reduce's options
  int reduce_percent = 30;              ///< generate_case: percent of reduce cases
  int invalid_percent = 10;             ///< generate_case: percent of deliberately invalid cases
  /// generate_case: percent of VJP cases (generate_vjp_case). 0 draws no choice for it, so a
  /// campaign without VJPs draws exactly the cases it drew before VJPs existed.
  int vjp_percent = 0;
  /// generate_case: percent of cases given input layouts (draw_layouts), drawn after the case. 0
  /// draws no choice for it; the campaign turns it on, so backends declaring `strided_inputs` get
  /// views of their storage.
  int layout_percent = 0;
};

/// Restricts `options` to `dtypes` (`fuzz --dtypes`): einsums draw the non-bool ones, reduces (and
/// the deliberately invalid mutations that change a dtype) only these; with no einsum dtype left
/// every case is a reduce. VJP cases keep to f32/f64 among them (the caller refuses a VJP share
/// when there is neither).
void restrict_dtypes(GenOptions& options, std::span<const DType> dtypes);

/// Parses a comma-separated dtype list ("f16,bf16"), as `fuzz --dtypes` and `profile --dtype`
/// take it; an unknown or repeated name or an empty list is `invalidArgument` naming `option` and
/// listing the dtypes.
Result<std::vector<DType>> parse_dtype_list(std::string_view text, std::string_view option);

/// Draws one valid einsum case (the checker accepts it). Deterministic in the choices.
Case generate_einsum(ChoiceSource& choices, const GenOptions& options = {});

/// Draws one valid einsum case from `rng` (advancing it). Deterministic in the state of `rng`.
Case generate_einsum(Rng& rng, const GenOptions& options = {});

/// Draws one valid reduce case (check_reduce accepts it): op, pattern, `reduction`, supplied
/// `axis_lengths` (in random order), dtype valid for the kind, one input.
Case generate_reduce(ChoiceSource& choices, const ReduceGenOptions& options = {});

/// The campaign's draw: an einsum or (reduce_percent) a reduce, and in invalid_percent of the cases
/// a mutation of it that the reference should reject (wrong operand count, incompatible
/// broadcast, rank mismatch, bad token, unknown output axis, wrong dtype, unused length, …).
Case generate_case(ChoiceSource& choices, const GenOptions& options = {});

/// Gives some of `c`'s inputs (its forward inputs; never a VJP's cotangent) a layout
/// (docs/protocol.md, "Strided inputs"): permuted storage, gaps, reversed axes, expanded axes
/// (stride 0; the values along them are made equal), any stride on a length-1 axis, an offset and a
/// fill value in the slots the view leaves. Every layout passes layout_storage, and its storage stays
/// within a few elements per logical element. Leaves `layouts` empty when it gives none.
void draw_layouts(Case& c, ChoiceSource& choices);

/// Makes each input's values what its layout can hold after they were overwritten (the fuzz targets'
/// value bytes): along every axis of stride 0 (an expanded view reads one slice) all slices become
/// the first. Inputs without a layout are left as they are.
void fit_values_to_layouts(Case& c);

/// Mutates a case into one the checker most likely rejects (deliberately invalid). A mutation that
/// changes the dtype picks one of `allowed` only (empty: any).
Case make_invalid(const Case& valid, ChoiceSource& choices, std::span<const DType> allowed = {});

/// The forward output's shape of `forward` (its cotangent ignored), or nullopt when the checker
/// rejects the forward case.
std::optional<Shape> forward_output_shape(const Case& forward);

/// `forward` made a VJP case: a cotangent of its output's shape and dtype from generate_values's
/// mixtures (IEEE edge values included); rank 0 when the checker rejects the forward case.
Case make_vjp(Case forward, ChoiceSource& choices);

/// One VJP case: a float einsum (the float dtypes of `options.dtypes`, f32/f64 when none) or
/// (reduce_percent) a sum/prod/mean/min/max reduce in f32/f64, with its cotangent; in
/// invalid_percent of the cases made invalid by make_invalid_vjp.
Case generate_vjp_case(ChoiceSource& choices, const GenOptions& options = {});

/// A VJP case the checker rejects: a cotangent of another shape (`cotangentShapeMismatch`), an
/// integer dtype or an any/all reduce (`notDifferentiable`), or an invalid forward case. Every
/// dtype it draws is one of `allowed` (empty: any): without i32 and i64, or without bool, those
/// mutations become an invalid forward case.
Case make_invalid_vjp(const Case& valid, ChoiceSource& choices, std::span<const DType> allowed = {});

/// Every dtype `options` generates: its einsum dtypes and its reduces' (what the invalid-case
/// mutations may switch to).
std::vector<DType> generated_dtypes(const GenOptions& options);

/// Values for `shape` from one of several mixtures: small integers, binary fractions, IEEE edge
/// values (NaN with payloads, ±Inf, ±0, subnormals, smallest normal, largest finite, 1 ± ulp),
/// cancellation pairs, raw bit patterns; integer extremes and wrap-around; bools 0/1.
Tensor generate_values(ChoiceSource& choices, DType dtype, const Shape& shape);

/// Applies a bijective renaming of every named label of `c`'s pattern (multi-character names
/// included), keeping the layout of the text; ellipses and structure are untouched.
Case relabel(const Case& c, Rng& rng);

}  // namespace einfuzz
