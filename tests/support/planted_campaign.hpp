// Test helper: campaigns against the planted bugs of issue 6, bounded by a number of cases (never
// by time) and storing nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "einfuzz/harness/campaign.hpp"
#include "harness/planted_bugs.hpp"

namespace einfuzz::test {

/// `cases` cases from `seed`, nothing stored, no progress lines.
inline CampaignOptions counted(std::uint64_t cases, std::uint64_t seed) {
  CampaignOptions o;
  o.cases = cases;
  o.seed = seed;
  o.store = false;
  o.progress_interval = 3600;
  return o;
}

/// A factory giving one planted-bug backend.
inline BackendFactory planted(PlantedBug bug) {
  return [bug]() -> Result<std::vector<std::unique_ptr<Backend>>> {
    std::vector<std::unique_ptr<Backend>> out;
    out.push_back(make_planted_bug_backend(bug));
    return out;
  };
}

}  // namespace einfuzz::test
