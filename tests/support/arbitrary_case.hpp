// rc::Arbitrary<einfuzz::Case>: RapidCheck draws cases through the one generator (generate_case),
// every choice of which is a RapidCheck draw. RapidCheck therefore shrinks a failing case by
// shrinking its choices towards alternative 0 — the simplest one by the generator's convention — so
// a shrunk case is still a case the generator can produce.
#pragma once

#include <rapidcheck.h>

#include <cstdint>

#include "einfuzz/core/case.hpp"
#include "einfuzz/core/choice.hpp"
#include "einfuzz/harness/generate.hpp"

namespace einfuzz::test {

/// A ChoiceSource answering from RapidCheck; only valid inside a generator (rc::gen::exec). Draws
/// are made at RapidCheck's nominal size, so they follow the generator's own weights (a
/// size-scaled draw would favour alternative 0 early in a run and skew every `chance`); shrinking
/// still moves each choice towards 0.
class RapidCheckChoices final : public ChoiceSource {
 public:
  std::uint64_t choose(std::uint64_t n) override {
    return n <= 1 ? 0 : *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint64_t>(0, n));
  }
  std::uint64_t bits() override {
    return *rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<std::uint64_t>());
  }
};

/// Cases as the campaign draws them (einsum and reduce, a share deliberately invalid), sized down
/// so a property runs thousands of them.
inline GenOptions arbitrary_case_options() {
  GenOptions options;
  options.max_global = 512;
  options.reduce.max_elements = 512;
  return options;
}

inline rc::Gen<Case> arbitrary_case(const GenOptions& options = arbitrary_case_options()) {
  return rc::gen::exec([options] {
    RapidCheckChoices choices;
    return generate_case(choices, options);
  });
}

}  // namespace einfuzz::test

namespace rc {
template <>
struct Arbitrary<einfuzz::Case> {
  static Gen<einfuzz::Case> arbitrary() { return einfuzz::test::arbitrary_case(); }
};
}  // namespace rc
