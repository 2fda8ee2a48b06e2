// Writes the conformance rows of SEMANTICS §11 (E01–E45, X01–X31, R01–R39, Y01–Y22, from
// tests/support/conformance_rows.cpp) as case files <dir>/<row>.case.json, or with --check reports
// files that are missing, stale or extra (exit 1). `expect` holds the error code or null; the
// expected output goes into `origin.output` for people (replay checks fused bitwise instead).
//
//   cmake --build build --target make_conformance_corpus
//   build/tests/make_conformance_corpus corpus/conformance
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "einfuzz/core/case.hpp"
#include "einfuzz/harness/check_command.hpp"
#include "support/conformance_rows.hpp"
#include "support/values_text.hpp"

namespace einfuzz {
namespace {

std::string output_note(const Shape& shape, const char* values) {
  return format_shape(shape) + ": [" + values + "]";
}

std::vector<Shape> shapes_of(const char* text) {
  auto shapes = parse_shapes(text, Limits{});
  if (!shapes) {
    std::cerr << "make_conformance_corpus: bad shapes '" << text << "': " << render(shapes.error()) << "\n";
    std::exit(2);
  }
  return *shapes;
}

std::map<std::string, std::string> conformance_cases() {
  std::map<std::string, std::string> out;
  for (const auto& row : test::einsum_value_rows()) {
    Case c;
    c.pattern = row.pattern;
    c.dtype = row.dtype;
    const auto shapes = shapes_of(row.shapes);
    for (std::size_t k = 0; k < shapes.size(); ++k) c.inputs.push_back(test::tensor_from_text(row.dtype, shapes[k], row.values.at(k)));
    c.expect_error = "";
    c.origin = {{"source", "SEMANTICS.md 11.1"}, {"row", row.id},
                {"output", output_note(shapes_of(row.out_shape).at(0), row.out_values)}};
    out[row.id] = write_case(c);
  }
  for (const auto& row : test::einsum_error_rows()) {
    Case c;
    c.pattern = row.pattern;
    c.dtype = DType::f64;
    for (const Shape& s : shapes_of(row.shapes)) c.inputs.emplace_back(DType::f64, s);
    c.expect_error = std::string(code_name(row.code));
    c.origin = {{"source", "SEMANTICS.md 11.2"}, {"row", row.id}};
    out[row.id] = write_case(c);
  }
  for (const auto& row : test::reduce_value_rows()) {
    Case c;
    c.op = Op::reduce;
    c.pattern = row.pattern;
    c.reduction = row.kind;
    c.axis_lengths = row.lengths;
    c.dtype = row.dtype;
    c.inputs.push_back(test::tensor_from_text(row.dtype, row.shape, row.values));
    c.expect_error = "";
    c.origin = {{"source", "SEMANTICS.md 11.3"}, {"row", row.id}, {"output", output_note(row.out_shape, row.out_values)}};
    out[row.id] = write_case(c);
  }
  for (const auto& row : test::reduce_error_rows()) {
    Case c;
    c.op = Op::reduce;
    c.pattern = row.pattern;
    c.reduction = row.kind;
    c.axis_lengths = row.lengths;
    c.dtype = row.dtype;
    c.inputs.emplace_back(row.dtype, row.shape);
    c.expect_error = std::string(code_name(row.code));
    c.origin = {{"source", "SEMANTICS.md 11.4"}, {"row", row.id}};
    out[row.id] = write_case(c);
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
