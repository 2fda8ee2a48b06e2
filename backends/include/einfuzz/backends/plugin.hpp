// In-process backends (PROTOCOL.md B): a shared library exporting the C table of
// <einfuzz/plugin.h>, loaded with dlopen; the harness owns every byte that crosses the boundary.
#pragma once

#include <memory>
#include <string>

#include "einfuzz/backends/backend.hpp"
#include "einfuzz/core/diagnostic.hpp"
#include "einfuzz/core/limits.hpp"

namespace einfuzz {

/// Where the plugin is and how its outputs are bounded.
struct PluginOptions {
  std::string path;  ///< passed to dlopen as given (a path with '/' or a library name)
  std::string name;  ///< shown in reports; empty: "plugin:" + path
  Limits limits;     ///< caps the output shape a plugin asks `alloc_output` for
};

/// Loads a plugin. `invalidArgument` (bad input, not a verdict) when dlopen fails, the entry symbol
/// is missing or returns NULL, the ABI version differs, or the table has no `run`. A plugin that
/// answers ok without an output, asks for a refused shape, or returns an unknown status gets
/// Fault{protocol}; one that writes to a strided input's storage Fault{input_modified} (dense
/// inputs are the case's own tensors, checksummed by the run boundary).
Result<std::unique_ptr<Backend>> load_plugin_backend(const PluginOptions& options);

}  // namespace einfuzz
