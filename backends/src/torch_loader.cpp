// Opens the torch module (backends/src/torch.cpp, built as einfuzz_torch.so) on first use. libtorch
// is large and slow to load, so it is kept out of every program's startup and loaded only by the
// programs that run a torch backend.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "einfuzz/backends/torch.hpp"

#ifndef EINFUZZ_TORCH_MODULE
#define EINFUZZ_TORCH_MODULE ""
#endif

namespace einfuzz {
namespace {

using Entry = Backend* (*)(int);

std::string module_path() {
  if (const char* path = std::getenv("EINFUZZ_TORCH_MODULE"); path && *path) return path;
  return EINFUZZ_TORCH_MODULE;
}

struct Module {
  Entry entry = nullptr;
  std::string error;
};

// Opened once and never closed: libtorch registers global state that does not survive unloading.
const Module& module() {
  static const Module m = [] {
    Module out;
    const std::string path = module_path();
    if (path.empty()) {
      out.error = "torch: this build found no libtorch (Debian: libtorch-dev)";
      return out;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      out.error = std::string("torch: cannot load ") + path + ": " + dlerror();
      return out;
    }
    out.entry = reinterpret_cast<Entry>(dlsym(handle, "einfuzz_torch_backend_v1"));
    if (!out.entry) out.error = "torch: " + path + " has no einfuzz_torch_backend_v1";
    return out;
  }();
  return m;
}

}  // namespace

std::unique_ptr<Backend> make_torch_backend(TorchPath path, TorchMinMax minmax) {
  const Module& m = module();
  if (!m.entry) return nullptr;
  return std::unique_ptr<Backend>(m.entry(static_cast<int>(path) + 16 * static_cast<int>(minmax)));
}

std::vector<std::string> torch_backend_names() {
  const std::string path = module_path();
  if (path.empty() || !std::filesystem::exists(path)) return {};
  return {"torch", "torch-path-right", "torch-path-outer", "torch-maxdim"};
}

std::string torch_unavailable_reason() { return module().error; }

}  // namespace einfuzz
