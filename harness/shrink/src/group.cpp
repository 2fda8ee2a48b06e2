// Group and pre-shrink signatures, canonical patterns and canonical names (group.hpp).
#include "einfuzz/harness/group.hpp"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/parse.hpp"
#include "einfuzz/reference/multiset.hpp"

namespace einfuzz {

std::string canonical_name(std::size_t i) {
  if (i < 26) return std::string(1, static_cast<char>('a' + i));
  if (i < 52) return std::string(1, static_cast<char>('A' + (i - 26)));
  return "a" + std::to_string(i - 51);
}

namespace {

/// Old name → canonical name, assigned in the order names are first looked up.
class Renamer {
 public:
  explicit Renamer(bool identity = false) : identity_(identity) {}
  const std::string& operator()(const std::string& name) {
    if (identity_) return name;
    auto it = map_.find(name);
    if (it == map_.end()) it = map_.emplace(name, canonical_name(map_.size())).first;
    return it->second;
  }

 private:
  bool identity_;
  std::map<std::string, std::string> map_;
};

/// `einsum`: a group of one name, `(a)` or `(a 1)`, is that name (SEMANTICS §1.3), so it is written bare.
std::string render_expression(const Expression& e, Renamer& rename, bool einsum = false) {
  std::string out;
  const auto atom_text = [&](const Atom& a) -> std::string {
    switch (a.kind) {
      case Atom::Kind::name: return rename(a.name);
      case Atom::Kind::ellipsis: return "...";
      case Atom::Kind::anonymous:
      case Atom::Kind::unit: return a.name;
    }
    return a.name;
  };
  for (const Item& item : e.items) {
    if (!out.empty()) out += ' ';
    if (!item.group || (einsum && item.atoms.size() == 1 && item.atoms[0].kind == Atom::Kind::name)) {
      out += atom_text(item.atoms.at(0));
      continue;
    }
    out += '(';
    for (std::size_t i = 0; i < item.atoms.size(); ++i) out += (i ? " " : "") + atom_text(item.atoms[i]);
    out += ')';
  }
  return out;
}

bool word_byte(unsigned char ch) { return std::isalnum(ch) || ch == '_' || ch >= 0x80; }

/// Text the parser rejects: identifier words (ASCII, not decimal) renamed in place, nothing else touched.
std::string rename_words(std::string_view text, Renamer& rename) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!word_byte(static_cast<unsigned char>(text[i]))) {
      out += text[i++];
      continue;
    }
    std::size_t j = i;
    bool ascii_identifier = !std::isdigit(static_cast<unsigned char>(text[i]));
    while (j < text.size() && word_byte(static_cast<unsigned char>(text[j]))) {
      ascii_identifier &= static_cast<unsigned char>(text[j]) < 0x80;
      ++j;
    }
    const std::string word(text.substr(i, j - i));
    const bool plain = ascii_identifier && (word == "_" || (word.front() != '_' && word.back() != '_'));
    out += plain ? rename(word) : word;
    i = j;
  }
  return out;
}

std::string canonical_pattern(Op op, std::string_view pattern, Renamer& rename) {
  if (op == Op::einsum) {
    if (auto p = parse_einsum(pattern)) {
      std::string lhs;
      for (std::size_t k = 0; k < p->operands.size(); ++k) {
        lhs += (k ? ", " : "") + render_expression(p->operands[k], rename, true);
      }
      while (!lhs.empty() && lhs.back() == ' ') lhs.pop_back();
      const std::string rhs = render_expression(p->output, rename, true);
      return (lhs.empty() ? "->" : lhs + " ->") + (rhs.empty() ? "" : " " + rhs);
    }
  } else if (auto p = parse_transform(pattern)) {
    const std::string lhs = render_expression(p->input, rename);
    const std::string rhs = render_expression(p->output, rename);
    return (lhs.empty() ? "->" : lhs + " ->") + (rhs.empty() ? "" : " " + rhs);
  }
  return rename_words(pattern, rename);
}

/// Whether some input has a length-0 dimension.
bool has_zero_length(const Case& c) {
  for (const Tensor& t : c.inputs)
    for (std::int64_t n : t.shape())
      if (n == 0) return true;
  return false;
}

/// Whether some fibre of a prod reduce holds ±0, ±inf or NaN, or is not certified by ORACLE §5's
/// prod row: Π max(1,|x|)·(1+u)^n ≥ Ω or Π min(1,|x|) < 2^emin·(1+u)^n, so that a sub-product of
/// it, in some order, can overflow or underflow. Only there can a backend that divides the full
/// product by x_p fail ORACLE §7 (group.hpp). Read from the multiset oracle's own certificates of
/// the forward prod (`no_overflow`, `no_inf_underflow`). False for a case the semantics rejects.
bool a_prod_fibre_can_leave_the_normal_range(const Case& c) {
  if (c.op != Op::reduce || c.inputs.size() != 1 || c.reduction != "prod" || !is_float(c.dtype)) return false;
  const Tensor& input = c.inputs[0];
  const auto checked = check_reduce(c.pattern, *c.reduction, input.shape(), c.axis_lengths, c.dtype, Limits{});
  if (!checked) return false;
  const reference::MultisetReduce truth = reference::multiset_reduce(*checked, input);
  return std::any_of(truth.elements.begin(), truth.elements.end(), [](const reference::ElementTruth& t) {
    return t.nan_input || t.value_class != reference::ValueClass::finite || t.exact.is_zero() || !t.no_overflow ||
           !t.no_inf_underflow;
  });
}

std::string op_text(const Case& c) {
  std::string s = case_kind_name(c);  // "vjp-einsum" / "vjp-reduce" keep VJP findings their own groups
  if (c.reduction) s += "/" + *c.reduction;
  return s;
}

}  // namespace

std::string canonical_pattern(Op op, std::string_view pattern) {
  Renamer rename;
  return canonical_pattern(op, pattern, rename);
}

Case canonical_names(const Case& c) {
  Renamer rename;
  Case out = c;
  out.pattern = canonical_pattern(c.op, c.pattern, rename);
  for (auto& [name, length] : out.axis_lengths) name = rename(name);
  return out;
}

Case canonical_operand_order(const Case& c) {
  if (c.op != Op::einsum) return c;
  auto p = parse_einsum(c.pattern);
  if (!p || p->operands.size() != c.inputs.size() || p->operands.size() < 2) return c;
  if (!c.layouts.empty() && c.layouts.size() != c.inputs.size()) return c;
  std::vector<std::size_t> order(c.inputs.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Shape& x = c.inputs[a].shape();
    const Shape& y = c.inputs[b].shape();
    if (x.size() != y.size()) return x.size() > y.size();
    return x > y;
  });
  Renamer keep(true);
  Case out = c;
  std::string lhs;
  for (std::size_t k = 0; k < order.size(); ++k) {
    lhs += (k ? ", " : "") + render_expression(p->operands[order[k]], keep);
    out.inputs[k] = c.inputs[order[k]];
    if (!c.layouts.empty()) out.layouts[k] = c.layouts[order[k]];
  }
  while (!lhs.empty() && lhs.back() == ' ') lhs.pop_back();
  const std::string rhs = render_expression(p->output, keep);
  out.pattern = (lhs.empty() ? "->" : lhs + " ->") + (rhs.empty() ? "" : " " + rhs);
  return out;
}

std::string special_values(const Case& c) {
  // Bits in the order of `names`.
  static constexpr const char* names[] = {"nan", "+inf", "-inf", "-0", "subnormal", "near-max", "int-min", "int-max"};
  unsigned seen = 0;
  for (const Tensor& t : c.inputs) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (const T x : t.template values<T>()) {
        if constexpr (is_float_type_v<T>) {
          if (std::isnan(x)) {
            seen |= 1u << 0;
          } else if (std::isinf(x)) {
            seen |= x > 0 ? 1u << 1 : 1u << 2;
          } else if (x == 0) {
            if (std::signbit(x)) seen |= 1u << 3;
          } else if (std::fpclassify(x) == FP_SUBNORMAL) {
            seen |= 1u << 4;
          } else if (std::fabs(x) >= std::numeric_limits<T>::max() / 2) {
            seen |= 1u << 5;
          }
        } else if constexpr (!std::is_same_v<T, Bool8>) {
          if (x == std::numeric_limits<T>::min()) seen |= 1u << 6;
          if (x == std::numeric_limits<T>::max()) seen |= 1u << 7;
        }
      }
    });
  }
  std::string out;
  for (unsigned i = 0; i < 8; ++i) {
    if (seen & (1u << i)) out += (out.empty() ? "" : ",") + std::string(names[i]);
  }
  return out.empty() ? "none" : out;
}

std::string length_classes(const Case& c) {
  std::string out;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    out += k ? ",(" : "(";
    const Shape& shape = c.inputs[k].shape();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      out += d ? "," : "";
      out += shape[d] == 0 ? "0" : shape[d] == 1 ? "1" : "n";
    }
    out += ")";
  }
  return out;
}

namespace {

/// What the input layouts of `c` do, for the signatures: "" without layouts, else " | strided"
/// followed by the kinds a library handles apart (`reversed`: a negative stride, `expanded`: stride
/// 0, on an axis longer than 1).
std::string layout_classes(const Case& c) {
  bool any = false;
  bool reversed = false;
  bool expanded = false;
  for (std::size_t k = 0; k < c.layouts.size() && k < c.inputs.size(); ++k) {
    if (!c.layouts[k]) continue;
    any = true;
    const Shape& shape = c.inputs[k].shape();
    for (std::size_t d = 0; d < shape.size() && d < c.layouts[k]->strides.size(); ++d) {
      if (shape[d] < 2) continue;
      reversed = reversed || c.layouts[k]->strides[d] < 0;
      expanded = expanded || c.layouts[k]->strides[d] == 0;
    }
  }
  if (!any) return "";
  return std::string(" | strided") + (reversed ? " reversed" : "") + (expanded ? " expanded" : "");
}

}  // namespace

std::string_view signature_kind(std::string_view signature) {
  std::size_t end = 0;  // where the fourth field ends: the fourth " | "
  for (int field = 0; field < 4; ++field) {
    end = signature.find(" | ", field == 0 ? 0 : end + 3);
    if (end == std::string_view::npos) return signature;
  }
  return signature.substr(0, end);
}

std::string group_signature(const Case& shrunk, std::string_view family, std::string_view verdict_label) {
  if (is_start_label(verdict_label)) return std::string(family) + " | " + std::string(verdict_label);
  const std::string head = std::string(family) + " | " + std::string(verdict_label) + " | " + op_text(shrunk);
  if (verdict_label == kEmptyContractionLabel) return head;  // one root cause per library and op (group.hpp)
  if (shrunk.is_vjp() && verdict_label.starts_with("mismatch(") && a_prod_fibre_can_leave_the_normal_range(shrunk)) {
    // the product divided by an element (group.hpp): one group per library, whatever the symptom
    return std::string(family) + " | mismatch | " + op_text(shrunk) + " | " + std::string(kProdFibreLeavesRange);
  }
  if (verdict_label == kRejectDisagreeLabel) {  // keyed by what the semantics says of the case (group.hpp)
    const auto checked = check_case(shrunk, Limits{});
    if (!checked) return head + " | the semantics rejects: " + std::string(code_name(checked.error().code));
    return head + " | " + std::string(dtype_name(shrunk.dtype)) + " | the semantics accepts | " +
           (has_zero_length(shrunk) ? "zero-length" : "no zero-length");
  }
  std::string s = head + " | " + std::string(dtype_name(shrunk.dtype)) + " | " + canonical_pattern(shrunk.op, shrunk.pattern) + " | " +
                  length_classes(shrunk) + " | " + special_values(shrunk) + layout_classes(shrunk);
  if (shrunk.cotangent) {  // a VJP case: also the special values of its cotangent
    Case g;
    g.inputs.push_back(*shrunk.cotangent);
    s += " | cotangent " + special_values(g);
  }
  return s;
}

std::string pre_shrink_signature(const Case& generated, std::string_view backend, std::string_view verdict_label,
                                 std::string_view reference) {
  if (is_start_label(verdict_label)) return std::string(backend) + " | " + std::string(verdict_label);
  // Only NaN and infinities: finer classes would shrink the same cause many times over.
  const std::string specials = special_values(generated);
  std::string coarse = specials.find("nan") != std::string::npos ? "nan" : "";
  if (specials.find("inf") != std::string::npos) coarse += coarse.empty() ? "inf" : ",inf";
  if (coarse.empty()) coarse = "finite";
  return std::string(backend) + " | " + std::string(verdict_label) + " | " + op_text(generated) + " | " +
         std::string(dtype_name(generated.dtype)) + " | " + std::string(reference) + " | " +
         (has_zero_length(generated) ? "zero-length" : "no-zero-length") + " | " + coarse +
         (generated.layouts.empty() ? "" : " | strided");
}

}  // namespace einfuzz
