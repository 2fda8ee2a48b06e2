// The one backend registry table (harness/run/src/backend_registry.cpp): every name it lists builds
// a backend of that name, `all` is exactly those names, their families, and the "unknown backend"
// message names them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "einfuzz/harness/backend_registry.hpp"

namespace einfuzz {
namespace {

TEST(BackendRegistry, EveryListedNameBuildsABackendOfThatName) {
  const std::vector<std::string> names = builtin_backend_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "fused");
  for (const std::string& name : names) {
    const auto backend = make_builtin_backend(name, RunOptions{});
    ASSERT_NE(backend, nullptr) << name;
    EXPECT_EQ(backend->name(), name);
  }
  EXPECT_EQ(make_builtin_backend("nope", RunOptions{}), nullptr);
}

TEST(BackendRegistry, AllExpandsToTheListedNamesInOrder) {
  const std::vector<std::string> all = {"all"};
  auto backends = make_backends(all, RunOptions{});
  ASSERT_TRUE(backends) << backends.error().message;
  std::vector<std::string> got;
  for (const auto& b : *backends) got.emplace_back(b->name());
  EXPECT_EQ(got, builtin_backend_names());
}

TEST(BackendRegistry, VariantsOfOneLibraryShareTheFamily) {
  for (const char* name : {"torch", "torch-path-right", "torch-path-outer", "torch-maxdim"}) EXPECT_EQ(backend_family(name), "torch");
  for (const char* name : {"numpy", "numpy-opt"}) EXPECT_EQ(backend_family(name), "numpy");
  for (const char* name : {"fused", "shuffle", "eigen", "xtensor", "cmd:python3 x.py"}) {
    EXPECT_EQ(backend_family(name), name);
  }
}

TEST(BackendRegistry, TheUnknownBackendMessageListsTheAvailableNames) {
  const std::vector<std::string> nope = {"nope"};
  auto backends = make_backends(nope, RunOptions{});
  ASSERT_FALSE(backends);
  std::string known;
  for (const std::string& n : builtin_backend_names()) known += (known.empty() ? "" : ", ") + n;
  EXPECT_NE(backends.error().message.find("unknown backend 'nope' (available: " + known + ", all, cmd:COMMAND, "
                                          "plugin:PATH.so)"),
            std::string::npos)
      << backends.error().message;
}

}  // namespace
}  // namespace einfuzz
