// Writes the conformance rows of SEMANTICS §11 (E01–E45, X01–X31, R01–R39, Y01–Y22) and the VJP rows
// of docs/semantics.md (V01–V20, `vjp` cases) and its f16/bf16 rows (H01–H11), from tests/support/conformance_rows.cpp, as case files
// <dir>/<row>.case.json, or with --check reports files that are missing, stale or extra (exit 1).
// `expect` holds the error code or null; the expected output (a VJP row: every input's cotangent)
// goes into `origin` for people (replay checks fused bitwise instead; tests/fused/vjp_test.cpp checks
// the VJP rows' values).
//
//   cmake --build build --target make_conformance_corpus
//   build/tests/make_conformance_corpus corpus/conformance
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "support/conformance_rows.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

std::string output_note(const Shape& shape, const char* values) {
  return format_shape(shape) + ": [" + values + "]";
}

/// One file: the row's case with its `expect` (an error code or null) and origin.
template <class Row>
std::string case_text(const Row& row, std::string expect_error,
                      std::vector<std::pair<std::string, std::string>> origin) {
  Case c = test::case_of(row);
  c.expect_error = std::move(expect_error);
  c.origin = std::move(origin);
  return write_case(c);
}

std::map<std::string, std::string> conformance_cases() {
  std::map<std::string, std::string> out;
  for (const auto& row : test::einsum_value_rows()) {
    out[row.id] = case_text(row, "", {{"source", "SEMANTICS.md 11.1"}, {"row", row.id},
                                      {"output", output_note(test::shapes_of(row.out_shape).at(0), row.out_values)}});
  }
  for (const auto& row : test::einsum_error_rows()) {
    out[row.id] = case_text(row, std::string(code_name(row.code)), {{"source", "SEMANTICS.md 11.2"}, {"row", row.id}});
  }
  for (const auto& row : test::reduce_value_rows()) {
    out[row.id] = case_text(row, "", {{"source", "SEMANTICS.md 11.3"}, {"row", row.id},
                                      {"output", output_note(row.out_shape, row.out_values)}});
  }
  for (const auto& row : test::reduce_error_rows()) {
    out[row.id] = case_text(row, std::string(code_name(row.code)), {{"source", "SEMANTICS.md 11.4"}, {"row", row.id}});
  }
  for (const auto& row : test::half_einsum_value_rows()) {
    out[row.id] = case_text(row, "", {{"source", "docs/semantics.md f16/bf16"}, {"row", row.id},
                                      {"output", output_note(test::shapes_of(row.out_shape).at(0), row.out_values)}});
  }
  for (const auto& row : test::half_reduce_value_rows()) {
    out[row.id] = case_text(row, "", {{"source", "docs/semantics.md f16/bf16"}, {"row", row.id},
                                      {"output", output_note(row.out_shape, row.out_values)}});
  }
  for (const auto& row : test::vjp_rows()) {
    std::vector<std::pair<std::string, std::string>> origin = {{"source", "docs/semantics.md VJPs"}, {"row", row.id}};
    const std::vector<Shape> shapes = test::shapes_of(row.shapes);
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      origin.emplace_back("gradient" + std::to_string(k), output_note(shapes[k], row.gradients.at(k)));
    }
    out[row.id] = case_text(row, "", std::move(origin));
  }
  return out;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace
}  // namespace einfuzz

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  bool check = false;
  fs::path dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check") {
      check = true;
    } else {
      dir = arg;
    }
  }
  if (dir.empty()) {
    std::cerr << "usage: make_conformance_corpus [--check] DIR\n";
    return 2;
  }
  const auto cases = einfuzz::conformance_cases();
  int changed = 0, stale = 0;
  if (!check) fs::create_directories(dir);
  for (const auto& [id, text] : cases) {
    const fs::path p = dir / (id + ".case.json");
    if (fs::exists(p) && einfuzz::read_file(p) == text) continue;
    ++changed;
    if (check) {
      std::cout << "out of date: " << p.string() << "\n";
    } else {
      std::ofstream(p, std::ios::binary) << text;
    }
  }
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".case.json") || cases.count(name.substr(0, name.size() - 10))) continue;
      ++stale;
      if (check) {
        std::cout << "not a conformance row: " << entry.path().string() << "\n";
      } else {
        fs::remove(entry.path());
      }
    }
  }
  if (check) {
    if (changed + stale) std::cout << "regenerate with: make_conformance_corpus " << dir.string() << "\n";
    return changed + stale ? 1 : 0;
  }
  std::cout << cases.size() << " conformance cases in " << dir.string() << " (" << changed << " written, " << stale
            << " removed)\n";
  return 0;
}
