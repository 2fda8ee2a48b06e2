// The einsum generator, the campaign's case mixture and the invalid-case mutations (see generate.hpp).
#include "einfuzz/harness/generate.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "einfuzz/core/check_case.hpp"

namespace einfuzz {
namespace {

constexpr const char* kNames[] = {"a", "b", "c", "i", "j", "k", "x", "_", "batch", "Ab", "z9", "head", "t_1", "Q"};

/// 1, 0, 2 or 2..max_length (the first alternative, 1, is the simplest).
std::int64_t draw_length(ChoiceSource& s, std::int64_t max_length) {
  static constexpr std::uint32_t kWeights[] = {25, 10, 25, 40};
  const std::int64_t two = std::min<std::int64_t>(2, max_length);
  switch (s.choose_weighted(kWeights)) {
    case 0: return std::min<std::int64_t>(1, max_length);
    case 1: return 0;
    case 2: return two;
    default: return s.between(two, std::max(two, max_length));
  }
}

/// A fresh identifier: a letter, then up to 4 letters, digits or `_`, never ending in `_`.
std::string fresh_name(ChoiceSource& s) {
  static constexpr char kFirst[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static constexpr char kRest[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
  std::string name(1, kFirst[s.choose(sizeof kFirst - 1)]);
  for (std::uint64_t n = s.choose(5); n > 0; --n) name += kRest[s.choose(sizeof kRest - 1)];
  while (name.size() > 1 && name.back() == '_') name.pop_back();
  return name;
}

template <class T>
void shuffle(ChoiceSource& s, std::vector<T>& v) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[s.choose(i)]);
}

struct Label {
  std::string name;
  std::int64_t length;
};

std::int64_t operand_elements(const Shape& shape) { return element_count(shape); }

}  // namespace

Case generate_einsum(ChoiceSource& s, const GenOptions& options) {
  Case c;
  c.op = Op::einsum;
  c.dtype = options.dtypes[s.choose(options.dtypes.size())];

  // The labels and the ellipsis slots with their resolved lengths.
  std::vector<Label> labels;
  const std::size_t label_count = 1 + s.choose(7);
  labels.reserve(label_count);
  std::vector<std::string> names(std::begin(kNames), std::end(kNames));
  for (std::size_t i = 0; i < label_count; ++i) {
    std::string name;
    if (s.chance(1, 10)) {
      name = fresh_name(s);
      if (std::find_if(labels.begin(), labels.end(), [&](const Label& l) { return l.name == name; }) != labels.end())
        continue;
    } else {
      if (names.empty()) break;
      const std::size_t pick = s.choose(names.size());
      name = names[pick];
      names.erase(names.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    labels.push_back({name, draw_length(s, options.max_length)});
    std::erase(names, labels.back().name);
  }
  const std::size_t common_rank = s.chance(1, 3) ? s.choose(4) : 0;
  std::vector<std::int64_t> slot_lengths;
  slot_lengths.reserve(common_rank);
  for (std::size_t i = 0; i < common_rank; ++i) slot_lengths.push_back(draw_length(s, options.max_length));
  if (!labels.empty() && s.chance(static_cast<std::uint64_t>(std::max(0, options.long_axis_percent)), 100)) {
    labels[s.choose(labels.size())].length = s.between(options.max_length, std::max(options.max_length, options.max_global));
  }

  // Keep output size × contraction size bounded: shorten lengths to 1 until it fits.
  auto global = [&] {
    double g = 1;
    for (const Label& l : labels) g *= static_cast<double>(std::max<std::int64_t>(l.length, 1));
    for (std::int64_t len : slot_lengths) g *= static_cast<double>(std::max<std::int64_t>(len, 1));
    return g;
  };
  // A choice source may run dry (libFuzzer bytes answer 0 forever), so a drawn index can repeat;
  // when it names a length that is already 1, the first length > 1 is shortened instead, so the
  // loop ends after at most one pass over the lengths.
  while (global() > static_cast<double>(options.max_global)) {
    const std::size_t n = labels.size() + slot_lengths.size();
    auto length_at = [&](std::size_t i) -> std::int64_t& {
      return i < labels.size() ? labels[i].length : slot_lengths[i - labels.size()];
    };
    std::size_t i = s.choose(n);
    if (length_at(i) <= 1) {
      for (i = 0; i < n && length_at(i) <= 1; ++i) {
      }
    }
    length_at(i) = 1;
  }

  const std::size_t operand_count = 1 + s.choose(static_cast<std::uint64_t>(std::max(1, options.max_operands)));
  // Flat containers (a handful of labels): `used` is sorted and deduplicated below, which gives
  // std::set's order; `physical` is looked up by name as a std::map was.
  std::vector<std::string> used;
  std::vector<std::pair<std::string, std::int64_t>> physical;  // one physical length per label per operand
  bool any_ellipsis = false;
  std::string text;
  for (std::size_t k = 0; k < operand_count; ++k) {
    const std::size_t named = s.choose(static_cast<std::uint64_t>(options.max_axes_per_operand) + 1);
    std::vector<std::string> items;
    items.reserve(named + 1);
    Shape shape;
    shape.reserve(named + common_rank);
    physical.clear();
    for (std::size_t d = 0; d < named; ++d) {
      const Label& l = labels[s.choose(labels.size())];
      // A repeated label (a diagonal) multiplies the operand's size again: keep it within max_global.
      auto it = std::find_if(physical.begin(), physical.end(), [&](const auto& p) { return p.first == l.name; });
      const bool fresh = it == physical.end();
      if (!fresh && it->second > 1 &&
          static_cast<double>(it->second) * static_cast<double>(operand_elements(shape)) >
              static_cast<double>(options.max_global)) {
        continue;
      }
      if (fresh) it = physical.emplace(physical.end(), l.name, l.length);
      if (fresh && l.length != 1 && s.chance(1, 5)) it->second = 1;  // size-1 broadcast
      const std::uint32_t kItemWeights[] = {44, 3, 1};                // a, (a), (a 1)
      switch (s.choose_weighted(kItemWeights)) {
        case 0: items.push_back(l.name); break;
        case 1: items.push_back("(" + l.name + ")"); break;
        default: items.push_back("(" + l.name + " 1)"); break;
      }
      shape.push_back(it->second);
      used.push_back(l.name);
    }
    // An ellipsis covering the last 0..R slots (right-aligned), or rarely one of rank 0.
    if ((common_rank > 0 && s.chance(1, 2)) || (common_rank == 0 && s.chance(1, 16))) {
      any_ellipsis = true;
      const std::size_t local = s.choose(common_rank + 1);
      const std::size_t at = s.choose(items.size() + 1);
      Shape dims;
      for (std::size_t j = common_rank - local; j < common_rank; ++j) {
        dims.push_back(slot_lengths[j] != 1 && s.chance(1, 5) ? 1 : slot_lengths[j]);
      }
      items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), "...");
      shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), dims.begin(), dims.end());
    }
    std::string expr;
    for (const auto& item : items) {
      if (!expr.empty()) expr += s.chance(1, 8) ? "  " : " ";
      expr += item;
    }
    if (k) text += s.chance(1, 8) ? "," : ", ";
    text += expr;
    c.inputs.push_back(generate_values(s, c.dtype, shape));
  }

  // Output: a random arrangement of some used labels (each once), maybe the ellipsis.
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  std::vector<std::string> out = std::move(used);
  shuffle(s, out);
  out.resize(s.choose(out.size() + 1));
  if ((any_ellipsis && s.chance(2, 3)) || s.chance(1, 20)) {
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(s.choose(out.size() + 1)), "...");
  }
  text += text.empty() ? "->" : " ->";
  for (const auto& o : out) {
    text += ' ';
    text += o;
  }
  c.pattern = std::move(text);
  return c;
}

Case generate_einsum(Rng& rng, const GenOptions& options) {
  SeededChoices choices(rng);
  return generate_einsum(choices, options);
}

namespace {

Case generate_unlaid_case(ChoiceSource& s, const GenOptions& options) {
  // Drawn only when asked for, so vjp_percent 0 leaves every other draw where it was.
  if (options.vjp_percent > 0 && s.chance(static_cast<std::uint64_t>(std::min(100, options.vjp_percent)), 100)) {
    return generate_vjp_case(s, options);
  }
  // With no einsum dtype (`--dtypes bool`) every case is a reduce; the draw stays where it was.
  const bool reduce =
      s.chance(static_cast<std::uint64_t>(std::max(0, options.reduce_percent)), 100) || options.dtypes.empty();
  Case c = reduce ? generate_reduce(s, options.reduce) : generate_einsum(s, options);
  if (s.chance(static_cast<std::uint64_t>(std::max(0, options.invalid_percent)), 100)) {
    c = make_invalid(c, s, generated_dtypes(options));
  }
  return c;
}

}  // namespace

Case generate_case(ChoiceSource& s, const GenOptions& options) {
  Case c = generate_unlaid_case(s, options);
  // Drawn last and only when asked for: layout_percent 0 draws exactly the cases drawn before, and
  // otherwise a case with layouts differs from its layout-free draw in its layouts (and the values
  // an expanded axis repeats) alone.
  if (options.layout_percent > 0 && s.chance(static_cast<std::uint64_t>(std::min(100, options.layout_percent)), 100)) {
    draw_layouts(c, s);
  }
  return c;
}

std::vector<DType> generated_dtypes(const GenOptions& options) {
  std::vector<DType> allowed = options.reduce.dtypes;
  for (DType d : options.dtypes) {
    if (std::find(allowed.begin(), allowed.end(), d) == allowed.end()) allowed.push_back(d);
  }
  return allowed;
}

namespace {

/// Shapes of a few tensors: up to 3 dims of length 0..3.
Shape small_shape(ChoiceSource& s) {
  Shape shape;
  for (std::uint64_t n = s.choose(4); n > 0; --n) shape.push_back(s.between(0, 3));
  return shape;
}

/// The most elements a shape mutation may allocate. The generator bounds output × contraction, where
/// a label counts once; an operand kept empty by one zero length may repeat a long label (the
/// diagonal `_ c _ _ _` with `_` = 730 and c = 0), and changing or dropping its zero would ask for
/// 730^4 · 2 values (std::bad_alloc at case 9850357 of `einfuzz fuzz --seed 20261207 --vjp-percent 10`).
constexpr std::int64_t kMaxMutatedElements = std::int64_t{1} << 20;

void mutate_shape(Case& c, ChoiceSource& s) {
  if (c.inputs.empty()) {
    c.inputs.push_back(generate_values(s, c.dtype, small_shape(s)));
    return;
  }
  Tensor& t = c.inputs[s.choose(c.inputs.size())];
  Shape shape = t.shape();
  switch (s.choose(3)) {
    case 0:  // one length changed to a different length > 1 (incompatible broadcast, dimension mismatch)
      if (!shape.empty()) {
        std::int64_t& len = shape[s.choose(shape.size())];
        len = len <= 1 ? 2 + static_cast<std::int64_t>(s.choose(2)) : len + 1;
        break;
      }
      [[fallthrough]];
    case 1: {  // one more dimension (rank mismatch)
      // The length before the position: the order gcc gave the former insert(pos(), length()) call.
      const std::int64_t length = s.between(1, 3);
      shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(s.choose(shape.size() + 1)), length);
      break;
    }
    default:  // one dimension fewer (rank mismatch), or a zero length (empty fibre, 0 vs n broadcast)
      if (!shape.empty() && s.chance(1, 2)) {
        shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(s.choose(shape.size())));
      } else if (!shape.empty()) {
        shape[s.choose(shape.size())] = 0;
      } else {
        shape.push_back(2);
      }
      break;
  }
  // Past the bound: the rank mismatch instead (one more length, 2), without a draw. An empty
  // operand stays empty; a non-empty one was allocated already, so twice it can be too.
  if (const std::optional<std::int64_t> count = checked_element_count(shape); !count || *count > kMaxMutatedElements) {
    shape = t.shape();
    shape.push_back(2);
  }
  t = generate_values(s, c.dtype, shape);
}

void insert_token(Case& c, ChoiceSource& s) {
  static constexpr const char* kTokens[] = {"$", "*", "\t", ".", " -> ", "(", ")", " 0 ", " _x ", " 2a ",
                                            "((", ",", " ... ", " 1 ", " 2 ", " (a b) ", "-", "x_"};
  const std::string token = kTokens[s.choose(std::size(kTokens))];
  c.pattern.insert(s.choose(c.pattern.size() + 1), token);
}

bool allows(std::span<const DType> allowed, DType d) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), d) != allowed.end();
}

void mutate_einsum(Case& c, ChoiceSource& s, std::span<const DType> allowed) {
  switch (s.choose(7)) {
    case 0:  // wrong operand count
      if (!c.inputs.empty() && s.chance(1, 2)) {
        c.inputs.erase(c.inputs.begin() + static_cast<std::ptrdiff_t>(s.choose(c.inputs.size())));
      } else {
        c.inputs.push_back(generate_values(s, c.dtype, small_shape(s)));
      }
      break;
    case 1:
    case 2: mutate_shape(c, s); break;
    case 3: insert_token(c, s); break;
    case 4: c.pattern += " zz"; break;  // unknown output axis (no generated label is `zz`)
    case 5: {  // a repeated output axis (duplicateAxis, or duplicateEinsumOutputAxis for `_`)
      const std::size_t arrow = c.pattern.find("->");
      const std::size_t word = c.pattern.find_first_not_of(" ,()", arrow == std::string::npos ? 0 : arrow + 2);
      if (word != std::string::npos && c.pattern.compare(word, 3, "...") != 0) {
        const std::size_t end = c.pattern.find_first_of(" ,()", word);
        c.pattern += " " + c.pattern.substr(word, end == std::string::npos ? std::string::npos : end - word);
      } else {
        c.pattern += " _ _";
      }
      break;
    }
    default: {  // bool has no einsum (unsupportedDtype)
      if (!allows(allowed, DType::boolean)) break;
      c.dtype = DType::boolean;
      for (Tensor& t : c.inputs) t = generate_values(s, c.dtype, t.shape());
      break;
    }
  }
}

void mutate_reduce(Case& c, ChoiceSource& s, std::span<const DType> allowed) {
  switch (s.choose(9)) {
    case 0: {
      static constexpr const char* kNamesOfNoReduction[] = {"median", "Sum", "", "logsumexp"};
      c.reduction = kNamesOfNoReduction[s.choose(std::size(kNamesOfNoReduction))];
      break;
    }
    case 1: {  // a dtype the kind does not accept
      static constexpr DType kDtypes[] = {DType::boolean, DType::i32, DType::f32, DType::i64};
      const DType d = kDtypes[s.choose(std::size(kDtypes))];
      if (d == c.dtype || !allows(allowed, d)) break;
      c.dtype = d;
      for (Tensor& t : c.inputs) t = generate_values(s, c.dtype, t.shape());
      break;
    }
    case 2: c.axis_lengths.emplace_back("zz", s.between(1, 3)); break;  // unusedAxisLength
    case 3:                                                           // duplicateAxisLength
      if (!c.axis_lengths.empty()) {
        c.axis_lengths.push_back(c.axis_lengths[s.choose(c.axis_lengths.size())]);
      } else {
        c.axis_lengths.emplace_back("a", 2);
        c.axis_lengths.emplace_back("a", 2);
      }
      break;
    case 4:  // a supplied length that disagrees with the shape
      if (!c.axis_lengths.empty()) {
        c.axis_lengths[s.choose(c.axis_lengths.size())].second += 1 + static_cast<std::int64_t>(s.choose(2));
        break;
      }
      [[fallthrough]];
    case 5: mutate_shape(c, s); break;
    case 6: insert_token(c, s); break;
    case 7: c.pattern += s.chance(1, 2) ? " zz" : " ..."; break;  // axisMismatch / invalidEllipsis
    default: c.inputs.push_back(generate_values(s, c.dtype, small_shape(s))); break;  // two inputs
  }
}

}  // namespace

Case make_invalid(const Case& valid, ChoiceSource& s, std::span<const DType> allowed) {
  Case c = valid;
  // A mutation can leave the case valid (a 1 added where it broadcasts): mutate again, a few times.
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (c.op == Op::einsum) {
      mutate_einsum(c, s, allowed);
    } else {
      mutate_reduce(c, s, allowed);
    }
    if (!check_case(c, Limits{})) break;
  }
  return c;
}

void restrict_dtypes(GenOptions& options, std::span<const DType> dtypes) {
  options.dtypes.clear();
  for (DType d : dtypes) {
    if (d != DType::boolean) options.dtypes.push_back(d);
  }
  options.reduce.dtypes.assign(dtypes.begin(), dtypes.end());
}

Result<std::vector<DType>> parse_dtype_list(std::string_view text, std::string_view option) {
  std::string names;
  for (const DTypeInfo& row : dtype_table()) names += (names.empty() ? "" : ", ") + std::string(row.name);
  std::vector<DType> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const auto d = dtype_from_name(item);
    if (!d) {
      return make_diagnostic(Code::invalidArgument, std::string(option) + ": unknown dtype '" + std::string(item) +
                                                        "' in '" + std::string(text) + "' (the dtypes: " + names + ")");
    }
    if (std::find(out.begin(), out.end(), *d) != out.end()) {
      return make_diagnostic(Code::invalidArgument,
                             std::string(option) + ": dtype '" + std::string(item) + "' is listed twice");
    }
    out.push_back(*d);
    start = comma + 1;
  }
  return out;
}

Case relabel(const Case& c, Rng& rng) {
  // Collect names in order of appearance, then map them to fresh distinct names.
  std::vector<std::string> seen;
  const std::string& p = c.pattern;
  auto word_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (std::size_t i = 0; i < p.size();) {
    if (!word_char(p[i])) { ++i; continue; }
    std::size_t j = i;
    while (j < p.size() && word_char(p[j])) ++j;
    const std::string w = p.substr(i, j - i);
    // Decimal words (`1` in `(a 1)`) are unit or anonymous axes, not names.
    if (!std::isdigit(static_cast<unsigned char>(w[0])) && std::find(seen.begin(), seen.end(), w) == seen.end())
      seen.push_back(w);
    i = j;
  }
  std::map<std::string, std::string> rename;
  std::set<std::string> taken;
  for (const auto& w : seen) {
    std::string fresh;
    do {
      fresh = std::string(1, static_cast<char>('a' + rng.below(26)));
      for (std::uint64_t n = rng.below(4); n > 0; --n) fresh += static_cast<char>('a' + rng.below(26));
    } while (!taken.insert(fresh).second);
    rename[w] = fresh;
  }
  Case out = c;
  out.pattern.clear();
  for (std::size_t i = 0; i < p.size();) {
    if (!word_char(p[i])) { out.pattern += p[i++]; continue; }
    std::size_t j = i;
    while (j < p.size() && word_char(p[j])) ++j;
    const std::string w = p.substr(i, j - i);
    out.pattern += std::isdigit(static_cast<unsigned char>(w[0])) ? w : rename[w];
    i = j;
  }
  return out;
}

}  // namespace einfuzz
