// The verdict names of ORACLE.md §6, which of them fail a run, and a verdict's label.
#include "einfuzz/harness/verdict.hpp"

namespace einfuzz {

std::string verdict_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::pass: return "pass";
    case VerdictKind::pass_bitwise: return "pass(bitwise)";
    case VerdictKind::indeterminate: return "indeterminate";
    case VerdictKind::note_signed_zero: return "note(signed-zero)";
    case VerdictKind::mismatch_value: return "mismatch(value)";
    case VerdictKind::mismatch_special: return "mismatch(special)";
    case VerdictKind::mismatch_shape: return "mismatch(shape)";
    case VerdictKind::reject_disagree: return "reject-disagree";
    case VerdictKind::crash: return "crash";
    case VerdictKind::timeout: return "timeout";
    case VerdictKind::input_modified: return "input-modified";
    case VerdictKind::unsupported: return "unsupported";
  }
  return "?";
}

std::string error_bin_label(std::size_t bin) {
  if (bin == 0) return "0";
  if (bin == 1) return "(0, 2^-20]";
  if (bin == kErrorBins - 1) return "> 1";
  if (bin == kErrorBins - 2) return "(1/2, 1]";
  if (bin >= kErrorBins) return "?";
  const std::size_t k = kErrorBins - 2 - bin;  // the bin is (2^-(k+1), 2^-k]
  return "(2^-" + std::to_string(k + 1) + ", 2^-" + std::to_string(k) + "]";
}

bool is_failure(VerdictKind kind) noexcept {
  switch (kind) {
    case VerdictKind::pass:
    case VerdictKind::pass_bitwise:
    case VerdictKind::indeterminate:
    case VerdictKind::note_signed_zero:
    case VerdictKind::unsupported:
      return false;
    default:
      return true;
  }
}

std::string Verdict::label() const {
  std::string name = verdict_name(kind);
  if (reason.empty()) return name;
  if (kind == VerdictKind::indeterminate) return "indeterminate(" + reason + ")";
  if (kind == VerdictKind::mismatch_special) return "mismatch(special: " + reason + ")";
  if ((kind == VerdictKind::crash || kind == VerdictKind::timeout) && reason == kStartReason) {
    return name + "(" + reason + ")";
  }
  return name;
}

int verdict_severity(VerdictKind kind) noexcept {
  switch (kind) {
    case VerdictKind::mismatch_shape: return 6;
    case VerdictKind::mismatch_special: return 5;
    case VerdictKind::mismatch_value: return 4;
    case VerdictKind::note_signed_zero: return 2;
    case VerdictKind::indeterminate: return 1;
    case VerdictKind::pass: return 0;
    case VerdictKind::pass_bitwise: return -1;
    default: return 3;  // crash, timeout, … come from the run boundary, never from a judge
  }
}

}  // namespace einfuzz
