// Stored cases below a directory, for replay and for a campaign's known divergences.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "einfuzz/harness/campaign.hpp"

namespace einfuzz::campaign_detail {

/// How list_case_files treats the entries it meets.
enum class CaseFileWalk {
  /// Regular files only; the first entry whose type cannot be read ends the walk with `ec` set
  /// (a campaign's --known: what cannot be listed is reported, nothing else is tried).
  regular_files_until_error,
  /// Everything that is not a directory (a FIFO or a dangling symlink is then reported by replay,
  /// never skipped silently, never opened); an entry whose type cannot be read is skipped.
  non_directories,
};

/// The files named *.case.json below `dir`, sorted; `ec` is set when the directory cannot be
/// (fully) listed.
std::vector<std::filesystem::path> list_case_files(const std::filesystem::path& dir, CaseFileWalk walk,
                                                   std::error_code& ec);

}  // namespace einfuzz::campaign_detail
