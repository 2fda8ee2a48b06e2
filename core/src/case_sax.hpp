// The SAX pass of the case reader: a std::map DOM plus what such a DOM loses (member order,
// duplicates), with each input's `values` strings packed instead of one JSON node apiece.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einfuzz/core/text.hpp"

namespace einfuzz::detail {

// std::map-backed DOM: member order is recorded separately by CaseSax (below), so lookups stay
// logarithmic whatever the input (ordered_json's lookups are linear, quadratic over a document).
using Json = nlohmann::json;

/// The strings of one `inputs[i].values` array, packed end to end: about 4 bytes per value beyond
/// the text, where a JSON DOM takes some 90 (a node, a string object and its heap buffer each). A
/// case file near the size limit thus takes about three times its size to read, not ten.
struct PackedStrings {
  std::string bytes;
  std::vector<std::uint32_t> ends;  // ends[k]: one past string k in `bytes` (a case file is < 4 GiB)
  std::size_t size() const { return ends.size(); }
  std::string_view operator[](std::size_t k) const {
    const std::size_t begin = k == 0 ? 0 : ends[k - 1];
    return std::string_view(bytes).substr(begin, ends[k] - begin);
  }
};

/// SAX handler: builds the DOM and records what a std::map DOM loses — the file order and
/// duplicates of `axis_lengths` and `origin` members (duplicate axis lengths are kept for the
/// checker's `duplicateAxisLength`) — and the first duplicate key anywhere else that matters.
class CaseSax {
 public:
  using Members = std::vector<std::pair<std::string, Json>>;

  explicit CaseSax(Json& root) : dom_(root, /*allow_exceptions_=*/false) {}

  bool null() { return unpack() && on_value(Json(nullptr)) && dom_.null(); }
  bool boolean(bool v) { return unpack() && on_value(Json(v)) && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return unpack() && on_value(Json(v)) && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) {
    return unpack() && on_value(Json(v)) && dom_.number_unsigned(v);
  }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return unpack() && on_value(Json(v)) && dom_.number_float(v, s);
  }
  bool string(Json::string_t& v) {
    if (packing_ && depth_ == 4) {
      packing_->bytes += v;
      packing_->ends.push_back(static_cast<std::uint32_t>(packing_->bytes.size()));
      return true;
    }
    return on_value(Json(v)) && dom_.string(v);
  }
  bool binary(Json::binary_t& v) { return unpack() && on_value(Json(nullptr)) && dom_.binary(v); }
  bool start_object(std::size_t n) { return unpack() && on_container(true) && dom_.start_object(n); }
  bool start_array(std::size_t n) {
    if (!unpack() || !on_container(false) || !dom_.start_array(n)) return false;
    if (depth_ == 4 && where_ == Where::inputs && input_key_ == "values") {
      // inputs[i].values: strings go to packed_[i] (an empty array in the DOM) until anything
      // else appears, which unpack() hands to the DOM in order, as if never packed.
      packed_.resize(static_cast<std::size_t>(std::max<std::int64_t>(input_count_, 1)));
      packing_ = &packed_.back().emplace();
    }
    return true;
  }
  bool end_object() { return on_end() && dom_.end_object(); }
  bool end_array() {
    if (packing_ && depth_ == 4) packing_ = nullptr;  // the packed array is complete
    return on_end() && dom_.end_array();
  }
  bool key(Json::string_t& k) {
    on_key(k);
    return dom_.key(k);
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error_ = e.what();
    return false;
  }

  const std::string& syntax_error() const { return syntax_error_; }
  const std::string& duplicate() const { return duplicate_; }
  const std::vector<std::string>& top_keys() const { return top_order_; }
  const Members& axis_members() const { return axis_members_; }
  const Members& origin_members() const { return origin_members_; }
  /// Per input (by index), its `values` strings when they were packed (the DOM array is empty then).
  std::vector<std::optional<PackedStrings>>& packed() { return packed_; }

 private:
  /// What the level-1 container (a top-level member's value) being parsed is.
  enum class Where { other, axis_lengths, origin, expect, inputs };

  /// A `values` element that is not a string: give the DOM the strings packed so far, then this.
  bool unpack() {
    if (!packing_ || depth_ != 4) return true;
    PackedStrings strings = std::move(*packing_);
    packing_ = nullptr;
    packed_.back().reset();
    for (std::size_t k = 0; k < strings.size(); ++k) {
      Json::string_t v(strings[k]);
      if (!dom_.string(v)) return false;
    }
    return true;
  }

  // Primitive values and container starts sit at level depth_ (1 = a top-level member's value).
  bool on_value(Json v) {
    if (depth_ == 2) record_element(std::move(v));
    return true;
  }
  bool on_container(bool is_object) {
    if (depth_ == 1) {
      where_ = !is_object                   ? (top_key_ == "inputs" ? Where::inputs : Where::other)
               : top_key_ == "axis_lengths" ? Where::axis_lengths
               : top_key_ == "origin"       ? Where::origin
               : top_key_ == "expect"       ? Where::expect
                                            : Where::other;
      member_keys_.clear();
      if (where_ == Where::axis_lengths) axis_members_.clear();
      if (where_ == Where::origin) origin_members_.clear();
    } else if (depth_ == 2) {
      record_element(is_object ? Json::object() : Json::array());
      if (where_ == Where::inputs) member_keys_.clear();  // a new inputs[i] object
    }
    ++depth_;
    return true;
  }
  bool on_end() {
    if (depth_ > 0) --depth_;
    if (depth_ == 1) where_ = Where::other;
    return true;
  }
  void record_element(Json v) {
    if (where_ == Where::axis_lengths) axis_members_.emplace_back(pending_key_, std::move(v));
    if (where_ == Where::origin) origin_members_.emplace_back(pending_key_, std::move(v));
    if (where_ == Where::inputs) ++input_count_;
  }
  // Keys sit at level depth_: 1 for top-level keys, 2 for members of a top-level object value.
  void on_key(const std::string& k) {
    if (depth_ == 1) {
      if (!top_keys_.insert(k).second) note_duplicate(k, "at the top level");
      top_order_.push_back(k);
      top_key_ = k;
    } else if (depth_ == 2 && (where_ == Where::origin || where_ == Where::expect)) {
      if (!member_keys_.insert(k).second)
        note_duplicate(k, where_ == Where::origin ? "in origin" : "in expect");
    } else if (depth_ == 3 && where_ == Where::inputs) {
      input_key_ = k;
      if (!member_keys_.insert(k).second)
        note_duplicate(k, "in inputs[" + std::to_string(input_count_ - 1) + "]");
    }
    if (depth_ == 2) pending_key_ = k;
  }
  void note_duplicate(const std::string& k, const std::string& where) {
    if (duplicate_.empty()) duplicate_ = "duplicate key " + json_quote(k) + " " + where;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t depth_ = 0;       // containers currently open
  Where where_ = Where::other;  // the level-1 container being parsed
  std::string top_key_;         // the last top-level key
  std::string pending_key_;     // the last key of a level-1 object
  std::int64_t input_count_ = 0;
  std::string input_key_;               // the last key of an inputs[i] object
  std::vector<std::optional<PackedStrings>> packed_;
  PackedStrings* packing_ = nullptr;   // the values array being packed, if any
  std::set<std::string> top_keys_;
  std::vector<std::string> top_order_;
  std::set<std::string> member_keys_;  // keys of the current origin / expect / inputs[i] object
  Members axis_members_;
  Members origin_members_;
  std::string syntax_error_;
  std::string duplicate_;
};

}  // namespace einfuzz::detail
