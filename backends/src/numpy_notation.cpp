// numpy notation (PROTOCOL A §2): an einops-style einsum pattern spelled as numpy subscripts, the
// `subscripts` field of a request and torch's einsum argument.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/parse.hpp"

namespace einfuzz {
namespace {

std::string letter(std::size_t k) {
  return std::string(1, k < 26 ? static_cast<char>('a' + k) : static_cast<char>('A' + (k - 26)));
}

/// numpy_subscripts with and without shapes (`spell_summed_ellipsis` false: every `...` kept).
std::optional<std::string> spell_subscripts(std::string_view pattern, std::span<const Shape> shapes,
                                            bool spell_summed_ellipsis) {
  auto parsed = parse_einsum(pattern);
  if (!parsed) return std::nullopt;
  const auto has_ellipsis = [](const Expression& e) {
    return std::any_of(e.items.begin(), e.items.end(), [](const Item& item) {
      return std::any_of(item.atoms.begin(), item.atoms.end(),
                         [](const Atom& a) { return a.kind == Atom::Kind::ellipsis; });
    });
  };
  // SEMANTICS §3 sums an input ellipsis the output omits; numpy rejects `...` there. Then each
  // ellipsis slot E0..E(R-1) becomes a label of its own, right-aligned as §3 aligns them. That
  // needs every operand's ellipsis rank; when the shapes do not give one (wrong operand count, a
  // rank below the named items) `...` is kept and the backend rejects the case as the checker does.
  std::vector<std::int64_t> ellipsis_rank(parsed->operands.size(), 0);
  std::int64_t common_rank = 0;
  bool slots = false;
  if (spell_summed_ellipsis && !has_ellipsis(parsed->output) && shapes.size() == parsed->operands.size()) {
    slots = true;
    for (std::size_t k = 0; k < parsed->operands.size(); ++k) {
      const Expression& e = parsed->operands[k];
      if (!has_ellipsis(e)) continue;
      ellipsis_rank[k] = static_cast<std::int64_t>(shapes[k].size()) - static_cast<std::int64_t>(e.items.size() - 1);
      if (ellipsis_rank[k] < 0) slots = false;
      common_rank = std::max(common_rank, ellipsis_rank[k]);
    }
  }
  // Keys of the label table: names as written; ellipsis slot i as "...i" (no name contains '.').
  std::map<std::string, std::size_t> labels;
  bool representable = true;
  const auto label = [&](const std::string& key, std::string& out) {
    const auto [it, inserted] = labels.emplace(key, labels.size());
    if (it->second >= 52) {
      representable = false;
    } else {
      out += letter(it->second);
    }
  };
  const auto spell = [&](const Expression& e, std::int64_t rank) {
    std::string out;
    for (const Item& item : e.items) {
      if (item.atoms.size() != 1 || (item.group && item.atoms[0].kind == Atom::Kind::ellipsis)) {
        representable = false;  // (a b), (), (1), (...)
        continue;
      }
      const Atom& atom = item.atoms[0];
      if (atom.kind == Atom::Kind::ellipsis) {
        if (!slots) {
          out += "...";
          continue;
        }
        for (std::int64_t i = common_rank - rank; i < common_rank; ++i) label("..." + std::to_string(i), out);
      } else if (atom.kind == Atom::Kind::name) {
        label(atom.name, out);
      } else {
        representable = false;  // unit or anonymous axis
      }
    }
    return out;
  };
  std::string out;
  for (std::size_t k = 0; k < parsed->operands.size(); ++k) {
    if (k) out += ',';
    out += spell(parsed->operands[k], ellipsis_rank[k]);
  }
  out += "->" + spell(parsed->output, 0);
  if (!representable) return std::nullopt;
  return out;
}

}  // namespace

std::optional<std::string> numpy_subscripts(std::string_view pattern) { return spell_subscripts(pattern, {}, false); }

std::optional<std::string> numpy_subscripts(std::string_view pattern, std::span<const Shape> shapes) {
  return spell_subscripts(pattern, shapes, true);
}

}  // namespace einfuzz
