// `einfuzz backends`: every available backend (or the given specs) with version and capabilities.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/dtype.hpp"
#include "einfuzz/core/reduction.hpp"
#include "einfuzz/harness/backend_registry.hpp"
#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep = ",") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s.empty() ? "-" : s;
}

struct Row {
  std::string name, version, ops, dtypes, reductions, semantics, nan, factoring, strided, status;
  bool vjp = false;      ///< answers VJP cases (ORACLE §7)
  std::string tie_rule;  ///< its min/max tie rule when `vjp`, else empty
  /// Per float dtype it runs, the declared profile (ORACLE §8): the accumulator's format, and the
  /// input rounding where there is one.
  std::vector<std::pair<std::string, std::string>> accumulate, round_inputs;
};

/// "f16:f32,bf16:bf16" (the table's spelling of a per-dtype map), "-" when empty.
std::string join_map(const std::vector<std::pair<std::string, std::string>>& items) {
  std::vector<std::string> parts;
  for (const auto& [d, f] : items) parts.push_back(d + ":" + f);
  return join(parts);
}

nlohmann::json json_map(const std::vector<std::pair<std::string, std::string>>& items) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [d, f] : items) j[d] = f;
  return j;
}

void describe_profiles(const Capabilities& c, Row& r) {
  for (DType d : c.dtypes) {
    if (!is_float(d)) continue;
    const PrecisionProfile p = c.profile(d);
    r.accumulate.emplace_back(std::string(dtype_name(d)), std::string(dtype_name(p.accumulate)));
    if (p.round_inputs != InputRounding::none) {
      r.round_inputs.emplace_back(std::string(dtype_name(d)), std::string(input_rounding_name(p.round_inputs)));
    }
  }
}


Row describe(const Backend& b) {
  const Capabilities& c = b.capabilities();
  Row r;
  r.name = std::string(b.name());
  r.version = c.version;
  std::vector<std::string> ops, dtypes;
  for (Op o : c.ops) ops.emplace_back(op_name(o));
  for (DType d : c.dtypes) dtypes.emplace_back(dtype_name(d));
  r.ops = join(ops);
  r.dtypes = join(dtypes);
  r.reductions = join(c.reductions);
  r.semantics = std::string(semantics_name(c.semantics));
  r.nan = std::string(nan_profile_name(c.nan_profile));
  r.factoring = c.factoring ? "yes" : "no";
  r.strided = c.strided_inputs ? "yes" : "no";
  r.vjp = c.vjp;
  if (c.vjp) r.tie_rule = std::string(tie_rule_name(c.tie_rule));
  describe_profiles(c, r);
  r.status = "ok";
  if (const auto* p = dynamic_cast<const ProcessBackend*>(&b); p && p->start_failure()) {
    r.status = "not started: " + p->start_failure()->evidence;
  }
  return r;
}

// The reference is not a backend one selects: every case runs on it first, and it judges the others
// (ordered fold bit for bit, multiset oracle for any-order backends). Listed so the table shows
// everything that evaluates a case.
Row reference_row() {
  Row r;
  r.name = "reference";
  r.version = "einfuzz reference: materialised ordered fold + multiset oracle (always run; the judge)";
  r.ops = "einsum,reduce";
  std::vector<std::string> dtypes;
  for (const DTypeInfo& row : dtype_table()) dtypes.emplace_back(row.name);
  r.dtypes = join(dtypes);
  r.reductions = join(all_reduction_names());
  r.semantics = "ordered";
  r.nan = "ordered";
  r.factoring = "no";
  r.strided = "no";
  // Its VJPs (reference/src/vjp.cpp) give each element of a min/max tie set g/|T| (SEMANTICS §13.8).
  r.vjp = true;
  r.tie_rule = std::string(tie_rule_name(TieRule::equal_share));
  // The ordered folds run in the element type: the default profile of every float dtype.
  Capabilities all;
  all.dtypes.clear();
  for (const DTypeInfo& row : dtype_table()) all.dtypes.push_back(row.dtype);
  describe_profiles(all, r);
  r.status = "ok";
  return r;
}

}  // namespace

Subcommand add_backends(CLI::App& app) {
  auto specs = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("backends", "List the available backends with their versions and capabilities");
  cmd->add_option("--backend", *specs,
                  "specs to describe instead of every built-in (repeatable; cmd:COMMAND, plugin:PATH.so)")
      ->allow_extra_args(false);
  cmd->add_flag("--json", *json, "print one JSON document instead of the table");
  cmd->footer(R"(
Columns: ops, dtypes and reductions it runs; semantics `ordered` (judged bit for bit) or `any-order`
(judged by the multiset oracle); NaN profile of min/max; factoring (may factor sums out of
products); strided (accepts the layout extension's strided inputs); vjp (answers VJP cases, ORACLE
§7) and ties (its min/max tie rule: equal-share, one or all; `-` without VJPs); accumulate (per
float dtype, the format partial results are held in, ORACLE §8) and round_inputs (per float dtype,
the format einsum inputs are rounded to, e.g. tf32; `-`: none). --json: the same fields, with
"vjp" a boolean and "tie_rule" null without VJPs.)");
  return {cmd, [specs, json] {
            std::vector<std::string> list;
            for (const std::string& s : *specs) {
              for (std::string& b : split_backend_list(s)) list.push_back(std::move(b));
            }
            const bool everything = list.empty();
            if (everything) list = {"all"};
            RunOptions run;
            auto backends = make_backends(list, run);
            if (!backends) {
              std::cerr << render(backends.error()) << "\n";
              return 2;
            }
            std::vector<Row> rows;
            if (everything) rows.push_back(reference_row());
            for (const auto& b : *backends) rows.push_back(describe(*b));
            if (*json) {
              nlohmann::json j = nlohmann::json::array();
              for (const Row& r : rows) {
                j.push_back({{"name", r.name}, {"version", r.version}, {"ops", r.ops}, {"dtypes", r.dtypes},
                             {"reductions", r.reductions}, {"semantics", r.semantics}, {"nan_profile", r.nan},
                             {"factoring", r.factoring == "yes"}, {"strided_inputs", r.strided == "yes"},
                             {"vjp", r.vjp},
                             {"tie_rule", r.vjp ? nlohmann::json(r.tie_rule) : nlohmann::json(nullptr)},
                             {"accumulate", json_map(r.accumulate)},
                             {"round_inputs", json_map(r.round_inputs)}, {"status", r.status}});
              }
              std::cout << nlohmann::json{{"backends", j}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
              return 0;
            }
            const std::vector<std::string> head = {"backend", "ops", "dtypes", "reductions", "semantics",
                                                   "nan", "factoring", "strided", "vjp", "ties", "accumulate",
                                                   "round_inputs", "version"};
            std::vector<std::vector<std::string>> table = {head};
            for (const Row& r : rows) {
              table.push_back({r.name, r.ops, r.dtypes, r.reductions, r.semantics, r.nan, r.factoring, r.strided,
                               r.vjp ? "yes" : "no", r.vjp ? r.tie_rule : "-", join_map(r.accumulate),
                               join_map(r.round_inputs),
                               r.status == "ok" ? r.version : r.version + " [" + r.status + "]"});
            }
            std::vector<std::size_t> width(head.size(), 0);
            for (const auto& line : table) {
              for (std::size_t i = 0; i + 1 < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
            }
            for (const auto& line : table) {
              std::string out;
              for (std::size_t i = 0; i < line.size(); ++i) {
                out += line[i];
                if (i + 1 < line.size()) out += std::string(width[i] - line[i].size() + 2, ' ');
              }
              std::cout << out << "\n";
            }
            return 0;
          }};
}

}  // namespace einfuzz::cli
