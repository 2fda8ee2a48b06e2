// The library backends a declared-capability test runs (each through its einfuzz adapter), shared by
// the tests that demonstrate a declaration against the library itself.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "einfuzz/backends/eigen.hpp"
#include "einfuzz/backends/plugin.hpp"
#include "einfuzz/backends/xtensor.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"

namespace einfuzz::test {

/// Every library backend with declarations to demonstrate (the example plugin included).
inline const std::vector<std::string> kLibraryBackends = {"numpy", "numpy-opt", "torch", "torch-path-right",
                                                          "torch-path-outer", "torch-maxdim", "eigen", "xtensor",
                                                          "plugin"};

/// The backend through its einfuzz adapter, or nullptr with the reason it is absent.
inline std::unique_ptr<Backend> make_library_backend(const std::string& name, std::string& why_absent) {
  if (name == "plugin") {
    PluginOptions o;
    o.path = EINFUZZ_EXAMPLE_PLUGIN;
    auto b = load_plugin_backend(o);
    if (!b.ok()) why_absent = b.error().message;
    return b.ok() ? std::move(*b) : nullptr;
  }
  if (name == "eigen") return make_eigen_backend();
  if (name == "xtensor") return make_xtensor_backend();
  if (name.rfind("numpy", 0) == 0) {
    const auto client = find_numpy_client();
    if (!client) {
      why_absent = name + " is not available: no python3 that imports numpy (Debian: apt-get install python3-numpy)";
      return nullptr;
    }
    return make_numpy_backend(name == "numpy-opt", *client, Limits{});
  }
  auto b = make_builtin_backend(name, RunOptions{});
  if (!b) why_absent = name + " is not built: libtorch was not found (Debian: libtorch-dev)";
  return b;
}

/// A gtest parameter name for a backend name ('-' is not allowed there).
inline std::string library_test_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string s = p.param;
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace einfuzz::test
