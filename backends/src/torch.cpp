// The torch backends: at::einsum (with an optional explicit contraction path) and the at::
// reductions, used as a torch user would, forward and, for VJP cases, through autograd (`backward(g)`
// on the forward result). The only translation unit of the project that includes ATen;
// it is built as a loadable module (einfuzz_torch.so) that torch_loader.cpp opens on first use, so
// no other program pays for loading libtorch.
#include "einfuzz/backends/torch.hpp"

#include <ATen/ATen.h>
#include <c10/util/Logging.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "einfuzz/backends/adapter.hpp"
#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/parse.hpp"

#ifndef EINFUZZ_TORCH_VERSION
#define EINFUZZ_TORCH_VERSION "?"
#endif

namespace einfuzz {
namespace {

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::f32: return at::kFloat;
    case DType::f64: return at::kDouble;
    case DType::i32: return at::kInt;
    case DType::i64: return at::kLong;
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
    case DType::boolean: break;
  }
  return at::kBool;
}

std::optional<DType> dtype_of(at::ScalarType s) {
  switch (s) {
    case at::kFloat: return DType::f32;
    case at::kDouble: return DType::f64;
    case at::kInt: return DType::i32;
    case at::kLong: return DType::i64;
    case at::kBool: return DType::boolean;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default: return std::nullopt;
  }
}

/// The first line of a c10::Error, without the C++ backtrace torch appends.
std::string torch_message(const c10::Error& e) {
  std::string s = e.what_without_backtrace();
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.erase(nl);
  return s;
}

/// A torch view of input `k`: the case's own bytes (never copied, so a write would be seen by the
/// run boundary's checksum), or, for a layout with non-negative strides, a strided view of its
/// storage buffer (kept alive in `keep`; torch has no negative strides).
at::Tensor to_torch(const Case& c, std::size_t k, std::vector<Tensor>& keep) {
  const Tensor& t = c.inputs[k];
  const auto options = at::TensorOptions().dtype(scalar_type(t.dtype()));
  const std::vector<int64_t> sizes(t.shape().begin(), t.shape().end());
  if (k < c.layouts.size() && c.layouts[k]) {
    const InputLayout& l = *c.layouts[k];
    const bool forward = std::all_of(l.strides.begin(), l.strides.end(), [](std::int64_t s) { return s >= 0; });
    if (auto storage = layout_storage(t, l); forward && storage && storage->size() > 0) {
      keep.push_back(std::move(*storage));
      auto* base = const_cast<std::byte*>(keep.back().bytes().data()) + l.offset * static_cast<std::int64_t>(dtype_size(t.dtype()));
      return at::from_blob(base, sizes, std::vector<int64_t>(l.strides.begin(), l.strides.end()), options);
    }
  }
  if (t.size() == 0) return at::empty(sizes, options);
  // Read-only use: at::einsum and the reductions do not write their inputs.
  return at::from_blob(const_cast<std::byte*>(t.bytes().data()), sizes, options);
}

BackendResult from_torch(at::Tensor r) {
  r = r.contiguous();
  const auto dtype = dtype_of(r.scalar_type());
  if (!dtype) return Unsupported{std::string("torch returned the dtype ") + c10::toString(r.scalar_type())};
  Shape shape(r.sizes().begin(), r.sizes().end());
  Tensor out(*dtype, shape);
  const auto bytes = out.bytes();
  if (!bytes.empty()) std::memcpy(const_cast<std::byte*>(bytes.data()), r.data_ptr(), bytes.size());
  return out;
}

/// The `path` argument of at::einsum for `n` operands (2·(n−1) positions), or empty for none.
std::vector<int64_t> contraction_path(TorchPath path, std::size_t n) {
  std::vector<int64_t> out;
  if (path == TorchPath::automatic || n < 3) return out;
  for (auto m = static_cast<int64_t>(n); m >= 2; --m) {
    if (path == TorchPath::right_first) {
      out.insert(out.end(), {m - 2, m - 1});
    } else {
      out.insert(out.end(), {0, m - 1});
    }
  }
  return out;
}

std::string backend_name(TorchPath path, TorchMinMax minmax) {
  if (minmax == TorchMinMax::max_dim) return "torch-maxdim";
  switch (path) {
    case TorchPath::automatic: return "torch";
    case TorchPath::right_first: return "torch-path-right";
    case TorchPath::outer_first: return "torch-path-outer";
  }
  return "torch";
}

/// True when the cotangent's dtype is not the case's (the checker's invalidArgument for it).
bool g_dtype_differs(const Case& c) { return c.cotangent && c.cotangent->dtype() != c.dtype; }

/// A forward evaluation: the result (a graph node when the inputs require grad) or the answer.
using Forward = std::variant<at::Tensor, BackendResult>;

/// The leaves of a VJP: float inputs that require grad, so backward() fills their grad().
void require_grad(std::vector<at::Tensor>& leaves) {
  for (at::Tensor& t : leaves) t.set_requires_grad(true);
}

class TorchBackend final : public Backend {
 public:
  TorchBackend(TorchPath path, TorchMinMax minmax)
      : path_(path),
        minmax_(minmax),
        name_(backend_name(path, minmax)),
        caps_(full_capabilities(Semantics::any_order, NanProfile::propagate, true,
                                std::string("libtorch ") + EINFUZZ_TORCH_VERSION + " (ATen)" +
                                    (path == TorchPath::automatic ? "" : ", explicit contraction path") +
                                    (minmax == TorchMinMax::max_dim ? ", min/max through max(dim)/min(dim)" : ""))) {
    caps_.strided_inputs = true;
    // f16 and bf16 in the default profile (accumulate in the dtype). Measured on 1.13 CPU: sums and
    // means hold partial sums in f32, but bf16 matrix products (einsum through bmm) hold them in bf16
    // (300 ones dot 300 ones = 256), and einsum rounds each intermediate (a factored sum, a pairwise
    // contraction's result) to the dtype, so no wider accumulator holds for every op
    // (declared_profiles_test.cpp). f16 matrix products raise on CPU: unsupported.
    caps_.dtypes.push_back(DType::f16);
    caps_.dtypes.push_back(DType::bf16);
    // Autograd's VJPs: amax/amin share the cotangent equally among ties (their backward divides by
    // the tie count); max(dim)/min(dim) route it to the one index they return.
    caps_.vjp = true;
    caps_.tie_rule = minmax == TorchMinMax::max_dim ? TieRule::one : TieRule::equal_share;
  }
  std::string_view name() const override { return name_; }
  const Capabilities& capabilities() const override { return caps_; }

  BackendResult run(const Case& c) override {
    std::vector<Tensor> keep;
    std::vector<at::Tensor> leaves;
    // Half VJPs are outside the project's scope (f32/f64): no graph; check_case's notDifferentiable
    // answers them in backward().
    const bool vjp = c.is_vjp() && is_float(c.dtype) && !is_half(c.dtype);
    Forward f;
    try {
      f = c.op == Op::einsum ? einsum(c, keep, leaves, vjp) : reduce(c, keep, leaves, vjp);
    } catch (const c10::Error& e) {
      // libtorch 1.13 on CPU has no kernel for some ops on the 16-bit floats (matrix products and
      // prod on Half, prod on BFloat16): outside what it implements, never a disagreement.
      const std::string message = torch_message(e);
      if (is_half(c.dtype) && message.find("not implemented for '") != std::string::npos) {
        return Unsupported{"torch: " + message};
      }
      return Rejected{"", "torch: " + message};
    }
    if (auto* answer = std::get_if<BackendResult>(&f)) return std::move(*answer);
    at::Tensor& r = std::get<at::Tensor>(f);
    if (!c.is_vjp()) return from_torch(r);
    return backward(c, r, leaves);
  }

 private:
  /// The VJP of a forward result `r` computed from `leaves`: the case's own VJP rules first (the
  /// checker's, in its order), then r.backward(g) and each leaf's grad(); what torch raises there
  /// is outside what it implements.
  static BackendResult backward(const Case& c, at::Tensor& r, std::vector<at::Tensor>& leaves) {
    // The forward case passed torch; the VJP rules of check_case (notDifferentiable, the
    // cotangent's dtype and shape) are the checker's, so they are taken from it.
    // (A forward rejection of the checker's that torch did not share is the forward case's
    // disagreement; the backward then runs on what torch accepted.)
    if (auto checked = check_case(c, Limits{}); !checked) {
      const Code code = checked.error().code;
      if (code == Code::notDifferentiable || code == Code::cotangentShapeMismatch ||
          (code == Code::invalidArgument && g_dtype_differs(c))) {
        return rejected(checked.error());
      }
    }
    const Tensor& g = *c.cotangent;
    const std::vector<int64_t> g_sizes(g.shape().begin(), g.shape().end());
    const auto options = at::TensorOptions().dtype(scalar_type(g.dtype()));
    at::Tensor gt = g.size() == 0 ? at::zeros(g_sizes, options)
                                  : at::from_blob(const_cast<std::byte*>(g.bytes().data()), g_sizes, options);
    Gradients out;
    try {
      r.backward(gt, /*retain_graph=*/false, /*create_graph=*/false, at::TensorList(leaves));
      for (std::size_t k = 0; k < leaves.size(); ++k) {
        // No grad: nothing reached the leaf (torch's None), which is the zero cotangent.
        const at::Tensor grad = leaves[k].grad().defined() ? leaves[k].grad() : at::zeros_like(leaves[k]);
        BackendResult t = from_torch(grad);
        if (!std::holds_alternative<Tensor>(t)) return t;
        out.tensors.push_back(std::move(std::get<Tensor>(t)));
      }
    } catch (const c10::Error& e) {
      return Unsupported{"torch backward: " + torch_message(e)};
    }
    return out;
  }

  Forward einsum(const Case& c, std::vector<Tensor>& keep, std::vector<at::Tensor>& operands, bool vjp) const {
    // The einops front end: what does not parse is rejected with the parser's code.
    auto parsed = parse_einsum(c.pattern);
    if (!parsed) return BackendResult(rejected(parsed.error()));
    std::set<std::string> labels;
    for (const Expression& e : parsed->operands) {
      for (const Item& item : e.items) {
        for (const Atom& a : item.atoms) {
          if (a.kind == Atom::Kind::name) labels.insert(a.name);
        }
      }
    }
    if (labels.size() > 52) return BackendResult(Unsupported{"torch einsum letters: more than 52 labels"});
    const auto subscripts = numpy_subscripts(c.pattern);
    if (!subscripts) return BackendResult(Rejected{"", "einops: groups, unit and anonymous axes are not einsum axes"});
    if (c.dtype == DType::boolean) return BackendResult(Rejected{"unsupportedDtype", "einsum on bool (as the checker says)"});
    for (std::size_t k = 0; k < c.inputs.size(); ++k) operands.push_back(to_torch(c, k, keep));
    if (vjp) require_grad(operands);
    const std::vector<int64_t> path = contraction_path(path_, operands.size());
    return path.empty() ? at::einsum(*subscripts, operands) : at::einsum(*subscripts, operands, at::IntArrayRef(path));
  }

  /// max(dim)/min(dim) over the reduced axes `dims` of `t` (ascending): moved last and flattened
  /// into one, as a torch user reduces several dimensions with them.
  static at::Tensor extreme_by_dim(const at::Tensor& t, const std::vector<int64_t>& dims, bool is_max) {
    std::vector<int64_t> order;
    std::vector<int64_t> sizes;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
        order.push_back(d);
        sizes.push_back(t.size(d));
      }
    }
    order.insert(order.end(), dims.begin(), dims.end());
    // The fibre length spelled out: -1 is ambiguous when a kept length is 0 (R13).
    int64_t fibre = 1;
    for (const int64_t d : dims) fibre *= t.size(d);
    sizes.push_back(fibre);
    const at::Tensor flat = t.permute(order).reshape(sizes);
    return std::get<0>(is_max ? at::max(flat, -1) : at::min(flat, -1));
  }

  Forward reduce(const Case& c, std::vector<Tensor>& keep, std::vector<at::Tensor>& leaves, bool vjp) const {
    // The checker's default limits: torch bounds its own sizes.
    auto checked = checked_reduce_or_reject(c, Limits{});
    if (auto* rejection = std::get_if<Rejected>(&checked)) return BackendResult(std::move(*rejection));
    const CheckedReduce& r = *std::get<std::shared_ptr<const CheckedReduce>>(checked);
    leaves.push_back(to_torch(c, 0, keep));
    if (vjp && reduction_info(r.kind).differentiable) require_grad(leaves);
    at::Tensor t = leaves[0];
    std::vector<int64_t> elementary;
    for (const ElementaryAxis& a : r.axes) elementary.push_back(a.length);
    t = t.reshape(elementary);
    std::vector<int64_t> dims(r.reduced.begin(), r.reduced.end());
    const auto st = scalar_type(c.dtype);
    const bool by_dim = minmax_ == TorchMinMax::max_dim;
    if (!dims.empty()) {
      switch (r.kind) {
        case Reduction::sum: t = at::sum(t, at::IntArrayRef(dims), /*keepdim=*/false, st); break;
        case Reduction::mean: t = at::mean(t, at::IntArrayRef(dims)); break;
        case Reduction::min: t = by_dim ? extreme_by_dim(t, dims, false) : at::amin(t, at::IntArrayRef(dims)); break;
        case Reduction::max: t = by_dim ? extreme_by_dim(t, dims, true) : at::amax(t, at::IntArrayRef(dims)); break;
        // prod, any and all take one dimension at a time (as einops does with torch): last first.
        case Reduction::prod:
          for (auto d = dims.rbegin(); d != dims.rend(); ++d) t = at::prod(t, *d, false, st);
          break;
        case Reduction::any:
          for (auto d = dims.rbegin(); d != dims.rend(); ++d) t = at::any(t, *d);
          break;
        case Reduction::all:
          for (auto d = dims.rbegin(); d != dims.rend(); ++d) t = at::all(t, *d);
          break;
      }
    }
    // Kept axes are in input order; the output wants them grouped and ordered as written.
    std::vector<int> kept;
    for (int a = 0; a < static_cast<int>(r.axes.size()); ++a) {
      if (std::find(r.reduced.begin(), r.reduced.end(), a) == r.reduced.end()) kept.push_back(a);
    }
    std::vector<int64_t> order;
    for (const auto& group : r.output_groups) {
      for (int a : group) order.push_back(std::find(kept.begin(), kept.end(), a) - kept.begin());
    }
    if (!order.empty()) t = t.permute(order);
    const std::vector<int64_t> out_shape(r.output_shape.begin(), r.output_shape.end());
    return t.reshape(out_shape);
  }

  TorchPath path_;
  TorchMinMax minmax_;
  std::string name_;
  Capabilities caps_;
};

}  // namespace

}  // namespace einfuzz

// The module's one entry point (torch_loader.cpp finds it with dlsym). The caller owns the result and
// deletes it through Backend's virtual destructor, so allocation and release both happen in here.
// `variant` is the path (TorchPath) plus 16 × the min/max kind (TorchMinMax).
extern "C" __attribute__((visibility("default"))) einfuzz::Backend* einfuzz_torch_backend_v1(int variant) {
  // Every c10::Error symbolises a C++ backtrace (dladdr per frame) when it is made, a quarter of an
  // `all` campaign's time (torch rejects many cases, and throws internally on some); torch_message
  // reads what_without_backtrace, so the backtrace is never shown. Not fetched at all, then.
  static const bool no_backtraces = [] {
    c10::SetStackTraceFetcher([] { return std::string(); });
    return true;
  }();
  (void)no_backtraces;
  return new einfuzz::TorchBackend(static_cast<einfuzz::TorchPath>(variant % 16),
                                   static_cast<einfuzz::TorchMinMax>(variant / 16));
}
