// `einfuzz check`: build the case, run it, print one verdict per backend (text or JSON).
#include "einfuzz/harness/check_command.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "einfuzz/harness/reproduce.hpp"
#include "einfuzz/harness/values.hpp"

namespace einfuzz {

Result<std::vector<Shape>> parse_shapes(std::string_view text, const Limits& limits) {
  std::vector<Shape> shapes;
  if (text.empty()) return shapes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::string where = "shape " + std::to_string(shapes.size()) + " '" + std::string(item) + "'";
    Shape shape;
    if (item != "()") {
      std::size_t pos = 0;
      while (true) {
        const std::size_t x = std::min(item.find('x', pos), item.size());
        const std::string_view digits = item.substr(pos, x - pos);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
          return make_diagnostic(Code::malformedShape,
                                 where + ": each length is a decimal number, lengths are separated by 'x', "
                                         "a rank-0 operand is written '()' (e.g. --shapes '2x3,(),0')");
        }
        std::int64_t length = 0;
        for (char c : digits) {
          if (__builtin_mul_overflow(length, 10, &length) || __builtin_add_overflow(length, c - '0', &length)) {
            return make_diagnostic(Code::sizeLimitExceeded, where + ": a length overflows int64");
          }
        }
        shape.push_back(length);
        if (x == item.size()) break;
        pos = x + 1;
      }
    }
    if (auto size = check_tensor_size(shape, limits, where); !size) return std::move(size).error();
    shapes.push_back(std::move(shape));
    start = comma + 1;
  }
  return shapes;
}

Result<std::pair<std::string, std::int64_t>> parse_axis_length(std::string_view text) {
  const std::size_t eq = text.find('=');
  const auto bad = [&] {
    return make_diagnostic(Code::invalidArgument, "--axis '" + std::string(text) +
                                                      "' must be NAME=LENGTH with a decimal length, e.g. --axis h2=2");
  };
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) return bad();
  const std::string_view digits = text.substr(eq + 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return bad();
  std::int64_t length = 0;
  for (char c : digits) {
    if (__builtin_mul_overflow(length, 10, &length) || __builtin_add_overflow(length, c - '0', &length)) {
      return make_diagnostic(Code::sizeLimitExceeded, "--axis '" + std::string(text) + "': the length overflows int64");
    }
  }
  return std::pair<std::string, std::int64_t>(std::string(text.substr(0, eq)), length);
}

namespace {

struct Prepared {
  Case c;
  std::string reproduce;  ///< the one command that reproduces this run
};

Result<Prepared> prepare(const CheckCommand& cmd) {
  Prepared p;
  // Everything besides the case that decides the verdicts travels with the command.
  const ReproduceContext context{cmd.command, cmd.backends, cmd.run, cmd.backend_options};
  if (!cmd.case_file.empty()) {
    auto c = read_case_file(cmd.case_file, cmd.run.limits);
    if (!c) return std::move(c).error();
    p.c = std::move(*c);
    p.reproduce = reproduce_command(cmd.case_file, context);
    return p;
  }
  if (!cmd.shapes) {
    return make_diagnostic(Code::invalidArgument, "--shapes is required unless --case is given");
  }
  const auto dtype = dtype_from_name(cmd.dtype);
  if (!dtype) {
    std::string names;
    for (const DTypeInfo& row : dtype_table()) names += (names.empty() ? "" : ", ") + std::string(row.name);
    return make_diagnostic(Code::invalidArgument, "--dtype must be one of " + names + "; got '" + cmd.dtype + "'");
  }
  const auto mode = value_mode_from_name(cmd.values);
  if (!mode) {
    return make_diagnostic(Code::invalidArgument,
                           "--values must be one of random, iota, ones, edge; got '" + cmd.values + "'");
  }
  auto shapes = parse_shapes(*cmd.shapes, cmd.run.limits);
  if (!shapes) return std::move(shapes).error();
  p.c.op = cmd.reduce ? Op::reduce : Op::einsum;
  p.c.reduction = cmd.reduce;
  if (!cmd.reduce && !cmd.axes.empty()) {
    return make_diagnostic(Code::invalidArgument, "--axis supplies reduce axis lengths; it needs --reduce KIND");
  }
  for (const std::string& a : cmd.axes) {
    auto axis = parse_axis_length(a);
    if (!axis) return std::move(axis).error();
    p.c.axis_lengths.push_back(std::move(*axis));
  }
  p.c.pattern = cmd.pattern;
  p.c.dtype = *dtype;
  for (std::size_t k = 0; k < shapes->size(); ++k) {
    p.c.inputs.push_back(make_values(*dtype, (*shapes)[k], *mode, cmd.seed, k));
  }
  p.c.origin = {{"seed", std::to_string(cmd.seed)}, {"values", cmd.values}};
  if (!cmd.vjp && (cmd.cotangent_values || cmd.cotangent_shape)) {
    return make_diagnostic(Code::invalidArgument, "--cotangent-values and --cotangent-shape need --vjp");
  }
  if (cmd.vjp) {
    const std::string g_values = cmd.cotangent_values.value_or(cmd.values);
    const auto g_mode = value_mode_from_name(g_values);
    if (!g_mode) {
      return make_diagnostic(Code::invalidArgument,
                             "--cotangent-values must be one of random, iota, ones, edge; got '" + g_values + "'");
    }
    // The forward output's shape; a forward case the checker rejects gets a rank-0 cotangent (the
    // run reports the forward diagnostic first).
    Shape g_shape;
    if (cmd.cotangent_shape) {
      auto given = parse_shapes(*cmd.cotangent_shape, cmd.run.limits);
      if (!given) return std::move(given).error();
      if (given->size() != 1) {
        return make_diagnostic(Code::malformedShape, "--cotangent-shape takes one shape, e.g. '2x3' or '()'");
      }
      g_shape = (*given)[0];
    } else if (auto checked = check_case(p.c, cmd.run.limits)) {
      g_shape = std::visit([](const auto& x) { return x.output_shape; }, *checked);
    }
    // Seeded as the operand after the inputs, so it differs from every input.
    p.c.cotangent = make_values(*dtype, g_shape, *g_mode, cmd.seed, shapes->size());
    p.c.origin.emplace_back("cotangent_values", g_values);
  }
  p.reproduce = reproduce_command(CaseFlags{cmd.pattern, cmd.reduce, cmd.axes, *cmd.shapes, cmd.dtype, cmd.values,
                                            cmd.seed, cmd.vjp, cmd.cotangent_values, cmd.cotangent_shape},
                                  context);
  return p;
}

/// The JSON text of `j`; bytes that are not UTF-8 (a pattern or dtype argument, a backend's message)
/// become U+FFFD instead of aborting the output.
std::string json_text(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json j = {{"code", code_name(d.code)}, {"message", d.message}};
  j["column"] = d.column == kNoColumn ? nlohmann::json(nullptr) : nlohmann::json(d.column);
  return j;
}

nlohmann::json verdict_json(const BackendOutcome& b) {
  nlohmann::json j = {{"backend", b.backend}, {"verdict", b.verdict.label()}, {"detail", b.verdict.detail},
                      {"failing_elements", b.verdict.differing}, {"indeterminate_elements", b.verdict.indeterminate},
                      {"noted_elements", b.verdict.notes}};
  if (b.verdict.first) {
    const ElementEvidence& e = *b.verdict.first;
    j["element"] = {{"flat_index", e.flat_index}, {"coords", e.coords}, {"expected", e.expected}, {"actual", e.actual}};
    if (e.gradient_of >= 0) j["element"]["gradient_of"] = e.gradient_of;  // a VJP case: whose cotangent
    if (!e.expected_label.empty()) j["element"]["expected_is"] = e.expected_label;
    if (!e.exact.empty()) {
      j["element"]["exact"] = e.exact;
      j["element"]["bound"] = e.bound;  // B rounded up to a double; bound_exact is what was compared
      j["element"]["bound_exact"] = e.bound_text;
      j["element"]["reachable"] = e.reachable;
      j["element"]["distance_ulps"] = e.ulps;
      j["element"]["distance_bounds"] = e.bound_multiples;
    }
  }
  return j;
}

std::string coords_text(const std::vector<std::int64_t>& c) {
  std::string s = "[";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + std::to_string(c[i]);
  return s + "]";
}

int print_bad_input(const CheckCommand& cmd, const Diagnostic& d, std::ostream& out, std::ostream& err) {
  if (cmd.json) {
    out << json_text(nlohmann::json{{"status", "bad-input"}, {"diagnostic", diagnostic_json(d)}}) << "\n";
  } else {
    err << render(d) << "\n";
  }
  return 2;
}

}  // namespace

int run_check_command(const CheckCommand& cmd, std::ostream& out, std::ostream& err) {
  auto prepared = prepare(cmd);
  if (!prepared) return print_bad_input(cmd, prepared.error(), out, err);
  const Case& c = prepared->c;
  if (cmd.run.profile) {
    if (auto problem = profile_option_problem(c, *cmd.run.profile)) return print_bad_input(cmd, *problem, out, err);
  }

  auto owned = make_backends(cmd.backends, cmd.run, cmd.backend_options);
  if (!owned) return print_bad_input(cmd, owned.error(), out, err);
  std::vector<Backend*> backends;
  for (const auto& b : *owned) backends.push_back(b.get());

  CaseOutcome outcome = run_case(c, backends, cmd.run);
  // What a backend process still sends once it is told bye is this case's (PROTOCOL A §3).
  finish_and_charge_late_faults(outcome, backends, c);
  if (outcome.skipped && !(c.expect_error && !outcome.expect_failure)) {
    // Over a harness limit: no backend ran, so there is no verdict to print (SEMANTICS §13.4).
    if (cmd.json) {
      out << json_text(nlohmann::json{{"status", "skipped"}, {"diagnostic", diagnostic_json(*outcome.skipped)}}) << "\n";
    } else {
      err << "einfuzz check: skipped, the case is over a harness limit (not a verdict on any backend; "
             "raise the limit to run it):\n"
          << render(*outcome.skipped) << "\n";
    }
    return 2;
  }
  // A bad case (the reference rejects it) is bad input unless the case file expected exactly that.
  const bool expected_rejection = outcome.rejection && c.expect_error && !outcome.expect_failure;
  const int status = outcome.failed() ? 1 : (outcome.rejection && !expected_rejection) ? 2 : 0;

  if (cmd.json) {
    nlohmann::json j;
    j["status"] = status == 0 ? "pass" : status == 1 ? "fail" : "bad-input";
    j["case"] = {{"op", op_name(c.op)}, {"kind", case_kind_name(c)}, {"pattern", c.pattern},
                 {"dtype", dtype_name(c.dtype)}};
    if (c.cotangent) j["case"]["cotangent_shape"] = c.cotangent->shape();
    if (c.reduction) j["case"]["reduction"] = *c.reduction;
    j["diagnostic"] = outcome.rejection ? diagnostic_json(*outcome.rejection) : nlohmann::json(nullptr);
    j["reference"] = outcome.expected ? nlohmann::json{{"shape", outcome.expected->shape()}} : nlohmann::json(nullptr);
    j["backends"] = nlohmann::json::array();
    for (const auto& b : outcome.backends) j["backends"].push_back(verdict_json(b));
    if (outcome.expect_failure) j["expect_failure"] = *outcome.expect_failure;
    j["reproduce"] = prepared->reproduce;
    out << json_text(j) << "\n";
    return status;
  }

  if (status == 2) {  // bad input that every backend also rejects: the diagnostic is the answer
    err << render(*outcome.rejection) << "\n";
    return status;
  }
  std::string shapes;
  for (const Tensor& t : c.inputs) shapes += (shapes.empty() ? "" : ",") + format_shape(t.shape());
  out << "case       " << (c.is_vjp() ? "vjp of " : "") << op_name(c.op)
      << (c.reduction ? " " + *c.reduction : std::string()) << " " << shell_quote(c.pattern) << "  dtype "
      << dtype_name(c.dtype) << "  shapes " << (shapes.empty() ? "(none)" : shapes);
  if (c.cotangent) out << "  cotangent " << format_shape(c.cotangent->shape());
  out << "\n";
  for (std::size_t k = 0; k < c.layouts.size(); ++k) {
    if (!c.layouts[k]) continue;
    const InputLayout& l = *c.layouts[k];
    std::string strides;
    for (std::int64_t s : l.strides) strides += (strides.empty() ? "" : ",") + std::to_string(s);
    out << "layout     input " << k << ": strides [" << strides << "], offset " << l.offset << ", storage "
        << l.storage << (l.fill ? ", filled" : "") << " (the view sent to backends declaring strided_inputs)\n";
  }
  if (outcome.rejection) {
    out << "reference  rejects" << (expected_rejection ? " as the case expects" : "") << ": "
        << render(*outcome.rejection) << "\n";
  } else {
    out << "reference  ok, output " << format_shape(outcome.expected->shape());
    if (outcome.expected_gradients) {
      std::string g;
      for (const Tensor& t : *outcome.expected_gradients) g += (g.empty() ? "" : ",") + format_shape(t.shape());
      out << ", gradients " << (g.empty() ? "(none)" : g);
    }
    out << "\n";
  }
  for (const BackendOutcome& b : outcome.backends) {
    out << b.backend << std::string(b.backend.size() < 11 ? 11 - b.backend.size() : 1, ' ')
        << b.verdict.label();
    if (!b.verdict.detail.empty()) out << "  " << b.verdict.detail;
    out << "\n";
    if (b.verdict.first) {
      const ElementEvidence& e = *b.verdict.first;
      if (e.gradient_of >= 0) out << "           in the gradient of input " << e.gradient_of << "\n";
      if (e.exact.empty()) {  // ordered oracle, or min/max under a NaN profile
        out << "           first at " << coords_text(e.coords) << " (flat " << e.flat_index
            << "): " << (e.expected_label.empty() ? "reference" : e.expected_label) << " " << e.expected << ", "
            << b.backend << " " << e.actual << "\n";
      } else {  // any-order oracle: the multiset value, the exact value, the bound, the result, the distance
        out << "           element " << coords_text(e.coords) << " (flat " << e.flat_index << "): " << e.expected_label
            << " " << e.expected << ", exact " << e.exact << ", bound B = " << e.bound_text << ", reachable "
            << e.reachable << ", " << b.backend << " " << e.actual;
        if (e.bound_multiples != 0 || e.ulps != 0) out << ", distance " << e.ulps << " ulp = " << e.bound_multiples << " B";
        out << "\n";
      }
    }
  }
  if (outcome.expect_failure) out << "expect     FAILED: " << *outcome.expect_failure << "\n";
  if (status != 0) out << "reproduce: " << prepared->reproduce << "\n";
  return status;
}

}  // namespace einfuzz
