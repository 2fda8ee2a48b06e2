// einfuzz_fuzz_seeds: builds the fuzz targets' seed corpora from stored case files (corpus/**/
// *.case.json) plus the hand-made seeds in fuzz/seeds/<target>/, one directory per target.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "einfuzz/core/case.hpp"
#include "differential.hpp"
#include "fuzz_input.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: einfuzz_fuzz_seeds OUT_DIR [--fresh] [--copy SEEDS_DIR]... [CASE_FILE_OR_DIR]...\n"
    "  Writes OUT_DIR/<target>/<hash> for fuzz_pattern, fuzz_case, fuzz_einsum_diff, fuzz_reduce_diff,\n"
    "  fuzz_vjp_diff, fuzz_backends_diff and fuzz_external\n"
    "  from every *.case.json found, and copies SEEDS_DIR/<target>/* alongside.\n"
    "  --fresh first empties OUT_DIR/<target>/ (those seven directories only).\n";

constexpr const char* kTargets[] = {"fuzz_pattern", "fuzz_case", "fuzz_einsum_diff", "fuzz_reduce_diff",
                                    "fuzz_vjp_diff", "fuzz_backends_diff", "fuzz_external"};

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {chars.begin(), chars.end()};
}

/// Writes `bytes` as OUT/<target>/<content hash>; true when the file is new.
bool write_seed(const fs::path& out, std::string_view target, const std::vector<std::uint8_t>& bytes) {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx",
                static_cast<unsigned long long>(einfuzz::fuzz::input_hash(bytes)));
  const fs::path path = out / target / name;
  if (fs::exists(path)) return false;
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return true;
}

/// What encode_case promises to keep: op, dtype, pattern, axis lengths and every input bit.
bool same_structure(const einfuzz::Case& a, const einfuzz::Case& b) {
  if (a.op != b.op || a.dtype != b.dtype || a.pattern != b.pattern || a.axis_lengths != b.axis_lengths ||
      a.inputs.size() != b.inputs.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.inputs.size(); ++k) {
    if (!einfuzz::bitwise_equal(a.inputs[k], b.inputs[k])) return false;
  }
  return true;
}

bool is_case_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() > 10 && name.ends_with(".case.json");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace einfuzz;
  if (argc < 2 || std::string_view(argv[1]) == "--help") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const fs::path out = argv[1];
  std::vector<fs::path> copies, inputs;
  bool fresh = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--fresh") {
      fresh = true;
    } else if (std::string_view(argv[i]) == "--copy" && i + 1 < argc) {
      copies.emplace_back(argv[++i]);
    } else {
      inputs.emplace_back(argv[i]);
    }
  }
  for (const char* t : kTargets) {
    if (fresh) fs::remove_all(out / t);
    fs::create_directories(out / t);
  }

  std::set<fs::path> case_files;
  for (const fs::path& p : inputs) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file() && is_case_file(e.path())) case_files.insert(e.path());
      }
    } else if (fs::is_regular_file(p, ec)) {
      case_files.insert(p);
    }  // a missing corpus/ is not an error: the hand-made seeds still make a corpus
  }

  std::size_t written = 0, unreadable = 0;
  for (const fs::path& file : case_files) {
    const std::vector<std::uint8_t> text = read_bytes(file);
    written += write_seed(out, "fuzz_case", text);
    const Result<Case> c = read_case(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()),
                                     file.string());
    if (!c) {
      ++unreadable;  // still a good seed for the reader
      continue;
    }
    const std::optional<std::vector<std::uint8_t>> encoded = fuzz::encode_case(*c);
    if (!encoded) continue;
    const std::optional<fuzz::Decoded> decoded = fuzz::decode_case(*encoded, fuzz::OpChoice::any);
    const bool small = decoded.has_value();
    if (decoded && !same_structure(*c, decoded->c)) {
      std::fprintf(stderr, "einfuzz_fuzz_seeds: %s does not survive encode → decode\n", file.c_str());
      return 1;
    }
    // The parse/check target needs no values: pattern and shapes only.
    const fuzz::Structure s = fuzz::decode_structure(*encoded, fuzz::OpChoice::any);
    written += write_seed(out, "fuzz_pattern", std::vector<std::uint8_t>(encoded->begin(),
                                                                        encoded->begin() + static_cast<std::ptrdiff_t>(std::min(s.value_offset, encoded->size()))));
    if (small) {
      written += write_seed(out, c->op == Op::einsum ? "fuzz_einsum_diff" : "fuzz_reduce_diff", *encoded);
      // The VJP target reads the same bytes (its cotangent continues after the inputs' values).
      written += write_seed(out, "fuzz_vjp_diff", *encoded);
      written += write_seed(out, "fuzz_backends_diff", *encoded);
      written += write_seed(out, "fuzz_external", *encoded);
    }
  }
  for (const fs::path& dir : copies) {
    for (const char* t : kTargets) {
      std::error_code ec;
      if (!fs::is_directory(dir / t, ec)) continue;
      for (const auto& e : fs::directory_iterator(dir / t, ec)) {
        if (e.is_regular_file()) written += write_seed(out, t, read_bytes(e.path()));
      }
    }
  }
  std::printf("einfuzz_fuzz_seeds: %zu case files (%zu unreadable), %zu seed files written under %s\n",
              case_files.size(), unreadable, written, out.c_str());
  return 0;
}
