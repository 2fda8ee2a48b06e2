// Writing a file so that it is complete or absent: corpus cases, reports, shrunk cases.
#pragma once

#include <string>
#include <string_view>

namespace einfuzz {

/// Writes `text` to `path` durably or not at all: a temporary file in the same directory, written,
/// flushed (fsync), checked, then renamed over `path` (so a reader sees the old file, the new one,
/// or none, never a partial one). An existing path that is not a regular file (/dev/null, /dev/full,
/// a FIFO) is written in place instead, every failed write reported. "-" is not special here. An empty string on success, else why
/// it failed (the temporary file is removed). `no_replace`: fail with "exists" instead of
/// replacing an existing `path` (the corpus never overwrites a case).
std::string write_file_atomically(const std::string& path, std::string_view text, bool no_replace = false);

}  // namespace einfuzz
