// Input layouts (the PROTOCOL A layout extension): a logical tensor laid out as a strided view over
// a storage buffer, with every reachable index, aliasing conflict and size checked first.
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"

namespace einfuzz {

namespace {

/// One step of the row-major odometer `coords` over `shape`, moving the storage index `pos` along.
void step(std::vector<std::int64_t>& coords, const Shape& shape, const InputLayout& layout, std::int64_t& pos) {
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (++coords[d] < shape[d]) {
      pos += layout.strides[d];
      return;
    }
    pos -= (shape[d] - 1) * layout.strides[d];
    coords[d] = 0;
  }
}

/// The first logical element (row-major) before `limit` that the layout maps to storage `slot`:
/// only for the diagnostic of an aliasing conflict, so a second walk costs nothing otherwise.
std::int64_t first_writer(const Shape& shape, const InputLayout& layout, std::size_t slot, std::int64_t limit) {
  std::vector<std::int64_t> coords(shape.size(), 0);
  std::int64_t pos = layout.offset;
  for (std::int64_t i = 0; i < limit; ++i) {
    if (static_cast<std::size_t>(pos) == slot) return i;
    step(coords, shape, layout, pos);
  }
  return -1;
}

}  // namespace

InputLayout tight_layout(const Shape& shape, InputLayout l) {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool empty = false;
  for (std::size_t d = 0; d < shape.size() && d < l.strides.size(); ++d) {
    if (shape[d] == 0) empty = true;
    if (shape[d] <= 0) continue;
    const std::int64_t extent = (shape[d] - 1) * l.strides[d];
    (extent < 0 ? lo : hi) += extent;
  }
  l.offset = empty ? 0 : -lo;
  l.storage = empty ? 0 : hi - lo + 1;
  return l;
}

Result<Tensor> layout_storage(const Tensor& logical, const InputLayout& layout, const Limits& limits) {
  const Shape& shape = logical.shape();
  const auto bad = [](const std::string& what) { return make_diagnostic(Code::invalidArgument, "layout: " + what); };
  if (layout.strides.size() != shape.size()) {
    return bad(std::to_string(layout.strides.size()) + " strides for a rank-" + std::to_string(shape.size()) +
               " input");
  }
  if (layout.storage < 0) return bad("negative storage size " + std::to_string(layout.storage));
  if (layout.offset < 0) return bad("negative offset " + std::to_string(layout.offset));
  if (auto size = check_tensor_size(Shape{layout.storage}, limits, "layout storage"); !size) {
    return std::move(size).error();
  }
  if (layout.fill && (layout.fill->dtype() != logical.dtype() || layout.fill->rank() != 0)) {
    return bad("the fill value must be a scalar of the input's dtype");
  }
  const std::int64_t n = logical.size();
  if (n > 0) {
    // The extreme storage indices the view reaches; any overflow is out of range anyway.
    std::int64_t lo = layout.offset;
    std::int64_t hi = layout.offset;
    bool overflow = false;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      std::int64_t extent = 0;
      overflow = overflow || __builtin_mul_overflow(shape[d] - 1, layout.strides[d], &extent) ||
                 __builtin_add_overflow(extent < 0 ? lo : hi, extent, extent < 0 ? &lo : &hi);
    }
    if (overflow || lo < 0 || hi >= layout.storage) {
      return bad("the view reaches storage indices " + (overflow ? std::string("beyond int64") :
                 std::to_string(lo) + " to " + std::to_string(hi)) + ", outside a storage of " +
                 std::to_string(layout.storage) + " elements");
    }
  } else if (layout.offset > layout.storage) {
    return bad("offset " + std::to_string(layout.offset) + " is past a storage of " + std::to_string(layout.storage) +
               " elements");
  }
  return visit_dtype(logical.dtype(), [&](auto tag) -> Result<Tensor> {
    using T = decltype(tag);
    const T fill = layout.fill ? layout.fill->values<T>()[0] : T{};
    std::vector<T> storage(static_cast<std::size_t>(layout.storage), fill);
    // One bit per slot (not an int64: that took 8 bytes more per storage element than the storage):
    // which slots a logical element wrote; a second writer is searched for only on a conflict.
    std::vector<bool> written(storage.size(), false);
    const std::span<const T> values = logical.values<T>();
    std::vector<std::int64_t> coords(shape.size(), 0);
    std::int64_t pos = layout.offset;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto slot = static_cast<std::size_t>(pos);
      const auto value = static_cast<std::size_t>(i);
      if (written[slot] && std::memcmp(&storage[slot], &values[value], sizeof(T)) != 0) {
        return bad("logical elements " + std::to_string(first_writer(shape, layout, slot, i)) + " and " +
                   std::to_string(i) + " share storage index " + std::to_string(pos) + " but hold different values");
      }
      storage[slot] = values[value];
      written[slot] = true;
      step(coords, shape, layout, pos);
    }
    return Tensor(Shape{layout.storage}, std::move(storage));
  });
}

}  // namespace einfuzz
