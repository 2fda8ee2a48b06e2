// The harness's own built-in backends, fused and shuffle (see backend_registry.hpp): apart from the
// registry, so that linking them does not link the library backends the registry names.
#include "einfuzz/backends/shuffle.hpp"
#include "einfuzz/harness/backend_registry.hpp"

namespace einfuzz {

std::unique_ptr<Backend> make_own_backend(std::string_view name, const RunOptions& options) {
  if (name == "fused") return make_fused_backend(options);
  if (name == "shuffle") {
    ShuffleOptions shuffle;
    shuffle.seed = options.shuffle_seed;
    shuffle.limits = options.limits;
    return make_shuffle_backend(shuffle);
  }
  return nullptr;
}

}  // namespace einfuzz
