// Finding stored cases below a directory (replay, a campaign's known divergences) and reading a
// campaign's known divergences.
#include "case_files.hpp"

#include <algorithm>

#include "einfuzz/core/case_origin.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/group.hpp"

namespace einfuzz::campaign_detail {

std::vector<std::filesystem::path> list_case_files(const std::filesystem::path& dir, CaseFileWalk walk,
                                                   std::error_code& ec) {
  namespace fs = std::filesystem;
  std::vector<fs::path> found;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool named = name.size() > 10 && name.ends_with(".case.json");
    if (walk == CaseFileWalk::regular_files_until_error) {
      if (it->is_regular_file(ec) && named) found.push_back(it->path());
    } else {
      if (named && !it->is_directory(ec)) found.push_back(it->path());
      ec.clear();
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace einfuzz::campaign_detail

namespace einfuzz {

KnownDivergences load_known_divergences(std::span<const std::filesystem::path> known, const RunOptions& run,
                                        std::vector<std::string>& errors) {
  namespace fs = std::filesystem;
  using campaign_detail::CaseFileWalk;
  using campaign_detail::list_case_files;
  std::vector<fs::path> files;
  for (const fs::path& p : known) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    const std::vector<fs::path> found = list_case_files(p, CaseFileWalk::regular_files_until_error, ec);
    if (ec) errors.push_back("cannot list " + p.string() + ": " + ec.message());
    files.insert(files.end(), found.begin(), found.end());
  }
  KnownDivergences out;
  for (const fs::path& file : files) {
    auto c = read_case_file(file, run.limits);
    if (!c) {
      errors.push_back(render(c.error()));
      continue;
    }
    std::string backend, verdict;
    for (const auto& [k, v] : c->origin) {
      if (k == "backend") backend = v;
      if (k == "verdict") verdict = v;
    }
    if (backend.empty() || verdict.empty()) continue;
    // A profile surprise's verdict holds under origin.profile only; under the declared profile the
    // campaign judges with, that case passes, and its signature must not hide a real failure.
    if (const auto p = origin_profile(*c); p && run.profile != p) continue;
    out.signatures.emplace(group_signature(*c, backend_family(backend), verdict), file);
    ++out.files;
  }
  return out;
}

}  // namespace einfuzz
