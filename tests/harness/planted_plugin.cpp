// A planted bug (planted_bugs.hpp) as a PROTOCOL B plugin, so that reproduce commands printed by
// real `einfuzz` processes can name it: `--backend plugin:/abs/libeinfuzz_planted_<bug>.so`. Built
// once per bug with EINFUZZ_PLANTED_BUG set to the PlantedBug enumerator (tests/CMakeLists.txt).
#include <einfuzz/plugin.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "planted_bugs.hpp"

#ifndef EINFUZZ_PLANTED_BUG
#error "EINFUZZ_PLANTED_BUG must name a PlantedBug enumerator, e.g. -DEINFUZZ_PLANTED_BUG=dropped_term"
#endif

namespace {

using einfuzz::Backend;
using einfuzz::DType;

DType dtype_of(einfuzz_dtype d) {
  switch (d) {
    case EINFUZZ_F32: return DType::f32;
    case EINFUZZ_F64: return DType::f64;
    case EINFUZZ_I32: return DType::i32;
    case EINFUZZ_I64: return DType::i64;
    case EINFUZZ_F16: return DType::f16;
    case EINFUZZ_BF16: return DType::bf16;
    case EINFUZZ_BOOL: break;
  }
  return DType::boolean;
}

/// A dense request tensor copied into an einfuzz tensor of `dtype`.
einfuzz::Tensor to_tensor(const einfuzz_tensor& t, DType dtype) {
  einfuzz::Shape shape(t.shape, t.shape + t.rank);
  std::size_t count = 1;
  for (const std::int64_t n : shape) count *= static_cast<std::size_t>(n);
  return einfuzz::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> values(count);
    if (count != 0) std::memcpy(values.data(), t.data, count * sizeof(T));
    return einfuzz::Tensor(std::move(shape), std::move(values));
  });
}

einfuzz_status answer(const einfuzz_host* host, einfuzz_status status, const std::string& code,
                      const std::string& message) {
  host->set_message(host->context, code.empty() ? nullptr : code.c_str(), message.c_str());
  return status;
}

einfuzz_status run(const einfuzz_request* r, const einfuzz_host* host) {
  // One backend per call: planted backends keep no state, and a fresh one cannot carry any over.
  const std::unique_ptr<Backend> backend =
      einfuzz::test::make_planted_bug_backend(einfuzz::test::PlantedBug::EINFUZZ_PLANTED_BUG);
  if (std::strcmp(r->op, "einsum") != 0) return answer(host, EINFUZZ_UNSUPPORTED, "", "einsum only");
  const DType dtype = dtype_of(r->dtype);
  if (dtype == DType::boolean) return answer(host, EINFUZZ_UNSUPPORTED, "", "no bool einsum");
  einfuzz::Case c;
  c.op = einfuzz::Op::einsum;
  c.pattern = r->pattern;
  c.dtype = dtype;
  for (std::size_t k = 0; k < r->input_count; ++k) c.inputs.push_back(to_tensor(r->inputs[k], dtype));
  try {
    const einfuzz::BackendResult result = backend->run(c);
    if (const auto* rejected = std::get_if<einfuzz::Rejected>(&result)) {
      return answer(host, EINFUZZ_ERROR, rejected->code, rejected->message);
    }
    if (const auto* unsupported = std::get_if<einfuzz::Unsupported>(&result)) {
      return answer(host, EINFUZZ_UNSUPPORTED, "", unsupported->message);
    }
    const einfuzz::Tensor& out = std::get<einfuzz::Tensor>(result);
    void* data = host->alloc_output(host->context, static_cast<std::int32_t>(out.shape().size()), out.shape().data());
    if (data == nullptr) return answer(host, EINFUZZ_ERROR, "", "the harness refused the output shape");
    const auto bytes = out.bytes();
    if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
    return EINFUZZ_OK;
  } catch (const std::exception& e) {
    return answer(host, EINFUZZ_ERROR, "", std::string("planted plugin: ") + e.what());
  }
}

const char* const kOps[] = {"einsum", nullptr};
const char* const kDtypes[] = {"f32", "f64", "i32", "i64", nullptr};

}  // namespace

extern "C" EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void) {
  static const einfuzz_plugin table = {
      EINFUZZ_PLUGIN_ABI_VERSION,
      "einfuzz planted bug",
      "test only",
      kOps,
      kDtypes,
      nullptr,
      "ordered",
      "ordered",
      0,
      0,
      "einops",
      run,
      nullptr,  // ABI 2: tie rule (unused)
      nullptr,  // ABI 2: no VJP entry
      nullptr,  // ABI 3: accumulated in the dtype itself (it is ordered anyway)
      nullptr,  // ABI 3: inputs as they are
  };
  return &table;
}
