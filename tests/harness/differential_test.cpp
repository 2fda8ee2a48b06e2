// Properties: fused == reference bitwise on generated einsums (zero-length axes, size-1
// broadcasting, diagonals, ellipses, 1–6 operands, scalar outputs, every dtype, IEEE edge values);
// relabelling axes changes nothing; generated cases survive the case format bit for bit; on
// rc::Arbitrary<Case> (the campaign's generator, invalid cases included) the built-in backends never
// fail the judge.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "einfuzz/core/case.hpp"
#include "einfuzz/fused/einsum.hpp"
#include "einfuzz/harness/generate.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/run.hpp"
#include "einfuzz/reference/einsum.hpp"
#include "support/arbitrary_case.hpp"
#include "support/compare.hpp"

namespace einfuzz {
namespace {

struct Evaluated {
  CheckedEinsum checked;
  Tensor reference;
};

Evaluated evaluate(const Case& c) {
  auto checked = check_case(c, Limits{});
  RC_ASSERT(checked.ok());  // the generator only draws valid einsums
  const auto& einsum = std::get<CheckedEinsum>(*checked);
  return {einsum, reference::evaluate_einsum(einsum, c.inputs)};
}

// A failing draw prints the case file, so it can be replayed with `einfuzz check --case`. NaN
// payloads are compared too: SEMANTICS §13.10 fixes which NaN wins (`--strict-nan-payload`).
#define RC_ASSERT_SAME(expected, actual, c)                                            \
  do {                                                                                 \
    const auto same_ = test::bitwise_same((expected), (actual), /*strict_nan=*/true); \
    if (!same_) RC_FAIL(std::string(same_.message()) + "\ncase:\n" + write_case(c));  \
  } while (0)

RC_GTEST_PROP(Differential, FusedEqualsReferenceBitwise, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Case c = generate_einsum(rng);
  const Evaluated e = evaluate(c);
  const fused::ExecOptions options{static_cast<unsigned>(*rc::gen::inRange(1, 4)), *rc::gen::element(1, 4, 8)};
  RC_CLASSIFY(e.checked.output_size == 0, "empty output");
  RC_CLASSIFY(e.checked.contraction_size == 0 && e.checked.output_size > 0, "empty contraction");
  RC_CLASSIFY(e.checked.output.empty(), "scalar output");
  RC_ASSERT_SAME(e.reference, fused::execute(fused::compile(e.checked), c.inputs, options), c);
}

RC_GTEST_PROP(Differential, RelabellingChangesNothing, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Case c = generate_einsum(rng);
  const Case renamed = relabel(c, rng);
  const Evaluated a = evaluate(c);
  const Evaluated b = evaluate(renamed);
  RC_ASSERT_SAME(a.reference, b.reference, renamed);
  RC_ASSERT_SAME(a.reference, fused::execute(fused::compile(b.checked), renamed.inputs), renamed);
}

RC_GTEST_PROP(Differential, GeneratedCasesRoundTripThroughTheCaseFormat, ()) {
  Rng rng(*rc::gen::arbitrary<std::uint64_t>());
  const Case c = generate_einsum(rng);
  const std::string text = write_case(c);
  auto back = read_case(text, "<generated>");
  RC_ASSERT(back.ok());
  RC_ASSERT(write_case(*back) == text);
  RC_ASSERT(back->inputs.size() == c.inputs.size());
  for (std::size_t k = 0; k < c.inputs.size(); ++k) RC_ASSERT(bitwise_equal(back->inputs[k], c.inputs[k]));
}

// The run boundary on whole cases: reference, fused and shuffle agree on what is rejected (and
// how), fused is bitwise, shuffle is inside the enclosure. RapidCheck shrinks a failure through the
// generator's choices.
RC_GTEST_PROP(Differential, BuiltinBackendsPassEveryArbitraryCase, (const Case& c)) {
  RunOptions options;
  options.shuffle_seed = *rc::gen::arbitrary<std::uint64_t>();
  auto fused = make_builtin_backend("fused", options);
  auto shuffle = make_builtin_backend("shuffle", options);
  Backend* backends[] = {fused.get(), shuffle.get()};
  const CaseOutcome out = run_case(c, backends, options);
  RC_CLASSIFY(out.rejection.has_value(), "rejected");
  RC_CLASSIFY(c.op == Op::reduce, "reduce");
  for (const BackendOutcome& b : out.backends) {
    if (is_failure(b.verdict.kind)) {
      RC_FAIL(b.backend + ": " + b.verdict.label() + " (shuffle seed " +
              std::to_string(options.shuffle_seed) + ")\ncase:\n" + write_case(c));
    }
  }
}

TEST(Differential, GeneratorIsDeterministic) {
  Rng a(42), b(42);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(write_case(generate_einsum(a)), write_case(generate_einsum(b)));
}

}  // namespace
}  // namespace einfuzz
