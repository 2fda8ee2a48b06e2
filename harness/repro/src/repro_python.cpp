// The Python reproducers of `einfuzz repro`: numpy.einsum / numpy reductions as
// clients/numpy_backend.py calls them, torch.einsum / torch reductions as backends/src/torch.cpp does.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "einfuzz/backends/process.hpp"
#include "repro_detail.hpp"

namespace einfuzz::detail {
namespace {

std::string py_str(const std::string& s) { return quoted_literal(s, '\'', "\\x%02x", ""); }

template <class V>
std::string py_tuple(const V& v) {
  std::string out = "(";
  for (std::size_t i = 0; i < v.size(); ++i) out += std::to_string(v[i]) + (v.size() == 1 ? "," : i + 1 < v.size() ? ", " : "");
  return out + ")";
}

template <class V>
std::string py_list(const V& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

/// One value as a Python expression: float.fromhex for finite floats, Bits(...) for NaNs (their
/// exact sign and payload), decimal integers, True/False.
std::string py_value(const Tensor& t, std::size_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) -> std::string {
    using T = decltype(tag);
    const T v = t.values<T>()[i];
    if constexpr (is_float_type_v<T>) {
      if (std::isnan(v)) return "Bits(" + bits_hex(v) + ")";
      if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
      return "float.fromhex('" + format_value(t, static_cast<std::int64_t>(i)) + "')";
    } else if constexpr (std::is_same_v<T, Bool8>) {
      return v ? "True" : "False";
    } else {
      return std::to_string(v);
    }
  });
}

std::string py_values(const Tensor& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < static_cast<std::size_t>(t.size()); ++i) {
    out += (i ? ", " : "") + py_value(t, i);
    if (i % 8 == 7 && i + 1 < static_cast<std::size_t>(t.size())) out += "\n    ";
  }
  return out + "]";
}

const char* struct_code(DType d) { return spelling(d).struct_code; }

const char* numpy_dtype(DType d) { return spelling(d).numpy; }

const char* torch_dtype(DType d) { return spelling(d).torch; }

std::string dyadic_py(const reference::Dyadic& d, std::int64_t divisor) {
  return "D(" + d.mantissa().get_str(10) + ", " + std::to_string(d.exponent()) + ", " + std::to_string(divisor) + ")";
}

/// The common tail: the requirement as data and the comparison.
std::string requirement_and_check(const ReproInput& in, const std::string& library) {
  const Requirement& req = in.required;
  std::string s;
  s += "\n# ---- what the semantics require (einfuzz's reference and judge) ----\n";
  if (req.rejection) {
    s += "REJECTION = " + py_str(std::string(code_name(req.rejection->code)) + ": " + req.rejection->message) + "\n";
    s += "DTYPE, SHAPE, ACCEPT, EXPECTED = None, None, None, None\n";
  } else {
    s += "REJECTION = None  # the semantics accept the case\n";
    s += "DTYPE = '" + std::string(dtype_name(req.dtype)) + "'\n";
    s += "SHAPE = " + py_tuple(req.shape) + "\n";
    if (req.exact) {
      s += "ACCEPT = None\n# integers and bools are exact: the one correct result, row-major\n";
      s += "EXPECTED = " + py_values(*req.exact) + "\n";
    } else {
      s += "EXPECTED = None\n";
      s += "# Per output element (row-major): accepted NaN / +Inf / -Inf results; finite results: None (none),\n"
           "# 'any', or 'interval' lo <= r <= hi with exact rational ends; the sign a zero must have (None:\n"
           "# either); the rule, in words.\n";
      s += "ACCEPT = [\n";
      for (std::size_t i = 0; i < req.accepted.size(); ++i) {
        const AcceptedSet& a = req.accepted[i];
        const char* finite = a.finite == AcceptedSet::Finite::none ? "None"
                             : a.finite == AcceptedSet::Finite::any ? "'any'"
                                                                    : "'interval'";
        const bool interval = a.finite == AcceptedSet::Finite::interval;
        s += "    A(" + std::string(a.nan ? "True" : "False") + ", " + (a.pos_inf ? "True" : "False") + ", " +
             (a.neg_inf ? "True" : "False") + ", " + finite + ", " + (interval ? dyadic_py(a.low, a.divisor) : "None") +
             ", " + (interval ? dyadic_py(a.high, a.divisor) : "None") + ", " +
             (!a.zero_negative ? "None" : *a.zero_negative ? "'-'" : "'+'") + ",\n      " + py_str(req.described[i]) +
             "),\n";
      }
      s += "]\n";
    }
  }
  s += R"PY(

def show(v):
    if isinstance(v, float):
        return v.hex() if math.isfinite(v) else repr(v)
    return repr(v)


def accepts(a, r):
    if math.isnan(r):
        return a.nan
    if math.isinf(r):
        return a.pinf if r > 0 else a.ninf
    if a.finite is None:
        return False
    if a.finite == 'interval' and not (a.lo <= Fraction(r) <= a.hi):
        return False
    if r == 0 and a.zero is not None and (math.copysign(1.0, r) < 0) != (a.zero == '-'):
        return False
    return True


def coords(i, shape):
    c = []
    for n in reversed(shape):
        c.append(i % n)
        i //= n
    return tuple(reversed(c))


def main():
    try:
        dtype, shape, values = run()
    except Exception as e:  # the adapter reports any library exception as a rejection of the case
        print('%s raises %s: %s' % (LIBRARY, type(e).__name__, e))
        if REJECTION:
            print('as required: the semantics reject the case (%s)' % REJECTION)
            return 0
        print('DIVERGENCE: the semantics accept the case (expected dtype %s, shape %s)' % (DTYPE, SHAPE))
        return 1
    print('%s returns dtype %s, shape %s' % (LIBRARY, dtype, shape))
    if REJECTION:
        print('values: %s' % ', '.join(show(v) for v in values[:16]))
        print('DIVERGENCE: the semantics reject the case: %s' % REJECTION)
        return 1
    if dtype != DTYPE or shape != SHAPE:
        print('DIVERGENCE: the semantics require dtype %s, shape %s' % (DTYPE, SHAPE))
        return 1
    failing = 0
    for i, r in enumerate(values):
        if EXPECTED is not None:
            ok = r == EXPECTED[i] and type(r) == type(EXPECTED[i])
            required = show(EXPECTED[i])
        else:
            ok = accepts(ACCEPT[i], r)
            required = ACCEPT[i].text
        failing += not ok
        if not ok or len(values) <= 16:
            if failing <= 16:
                print('element %s: %s %s; required: %s%s' % (coords(i, SHAPE), LIBRARY, show(r), required,
                                                         '' if ok else '   <-- DIVERGENCE'))
    if failing:
        print('DIVERGENCE: %d of %d elements are outside what the semantics allow' % (failing, len(values)))
        return 1
    print('no divergence: every element is what the semantics allow')
    return 0


sys.exit(main())
)PY";
  return s;
}

std::string prelude(const ReproInput& in, const std::string& module_import, const std::string& library) {
  std::string s = "#!/usr/bin/env python3\n";
  std::string header = in.header;
  std::size_t pos = 0;
  while (pos <= header.size()) {
    const std::size_t nl = header.find('\n', pos);
    s += "# " + header.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  s += "import collections\nimport math\nimport struct\nimport sys\nfrom fractions import Fraction\n\n";
  s += "try:\n" + module_import + "except ImportError as e:\n    print('cannot import: %s' % e)\n    sys.exit(2)\n\n";
  s += "LIBRARY = " + py_str(library) + "\n";
  s += "INF = float('inf')\n\n\n";
  s += "class Bits(int):\n    \"\"\"A raw bit pattern: a NaN with its exact sign and payload.\"\"\"\n\n\n";
  s += "def pack(code, values):\n    \"\"\"Little-endian bytes of `values` (struct code f, d, i, q or ?); Bits are stored as they are.\"\"\"\n"
       "    raw = {'f': '<I', 'd': '<Q'}.get(code)\n"
       "    return b''.join(struct.pack(raw, v) if isinstance(v, Bits) else struct.pack('<' + code, v) for v in values)\n\n\n";
  s += "def D(mantissa, exponent, divisor):\n    \"\"\"mantissa * 2**exponent / divisor, exactly.\"\"\"\n"
       "    return Fraction(mantissa) * Fraction(2) ** exponent / divisor\n\n\n";
  s += "A = collections.namedtuple('A', 'nan pinf ninf finite lo hi zero text')\n";
  return s;
}

/// The storage of input k when the adapter sends it as a strided view, else nullopt.
std::optional<Tensor> strided_storage(const Case& c, std::size_t k, const Limits& limits) {
  if (c.layouts.size() != c.inputs.size() || !c.layouts[k]) return std::nullopt;
  auto st = layout_storage(c.inputs[k], *c.layouts[k], limits);
  if (!st) return std::nullopt;
  return std::move(*st);
}

/// The start of the inputs section: its comment line, the dtype `DT`, for f16 and bf16 the function
/// `from_bits` (`bits_to_dt`: its body) and an empty list `inputs`.
std::string inputs_heading(const char* how, const char* dtype, DType d, const char* bits_to_dt) {
  std::string s = std::string("\n# ---- the inputs, ") + how + " ----\nDT = " + dtype + "\n";
  if (is_half(d)) {
    s += "\n\ndef from_bits(bits):\n    \"\"\"DT values from their 16-bit patterns, exactly.\"\"\"\n    return " +
         std::string(bits_to_dt) + "\n\n\n";
  }
  return s + "inputs = []\n";
}

/// The expression of a 1-D array of `t`'s values in DT: `from_bits` of their bit patterns for f16 and
/// bf16, else `packed_to_dt` applied to their packed little-endian bytes.
std::string flat_values(const Tensor& t, const std::string& packed_to_dt_open, const std::string& packed_to_dt_close) {
  if (is_half(t.dtype())) return bits16_list(t, "from_bits([", "])", 8, "    ");
  return packed_to_dt_open + "pack('" + struct_code(t.dtype()) + "', " + py_values(t) + ")" + packed_to_dt_close;
}

std::string numpy_inputs(const ReproInput& in) {
  std::string s = inputs_heading("built as clients/numpy_backend.py builds them from the bytes it reads",
                                 numpy_dtype(in.c.dtype), in.c.dtype,
                                 // frombuffer of the bytes, as the client: numpy 1.24's einsum reads behind an
                                 // empty operand, and what it finds there differs from a view's (einsum-d4d51f890a9f8a89).
                                 "np.frombuffer(np.array(bits, dtype='<u2').tobytes(), dtype=DT)");
  for (std::size_t k = 0; k < in.c.inputs.size(); ++k) {
    const Tensor& t = in.c.inputs[k];
    if (auto st = strided_storage(in.c, k, in.options.run.limits)) {
      const InputLayout& l = *in.c.layouts[k];
      std::vector<std::int64_t> bytes_strides;
      for (std::int64_t s2 : l.strides) bytes_strides.push_back(s2 * static_cast<std::int64_t>(dtype_size(t.dtype())));
      s += "# input " + std::to_string(k) + ": a strided view (strides " + py_tuple(l.strides) + " elements, offset " +
           std::to_string(l.offset) + ") of a storage buffer of " + std::to_string(l.storage) + " elements\n";
      s += "storage = " + flat_values(*st, "np.frombuffer(", ", dtype=DT, count=" + std::to_string(st->size()) + ")") + "\n";
      s += "inputs.append(as_strided(storage[" + std::to_string(l.offset) + ":], shape=" + py_tuple(t.shape()) +
           ", strides=" + py_tuple(bytes_strides) + ", writeable=False))\n";
    } else {
      s += "inputs.append(" + flat_values(t, "np.frombuffer(", ", dtype=DT, count=" + std::to_string(t.size()) + ")") +
           ".reshape(" + py_tuple(t.shape()) + "))\n";
    }
  }
  return s;
}

std::string torch_inputs(const ReproInput& in) {
  // torch.tensor takes int16 values: a pattern from 0x8000 up is its two's complement.
  std::string s = inputs_heading("as backends/src/torch.cpp hands them to libtorch", torch_dtype(in.c.dtype), in.c.dtype,
                                 "torch.tensor([b - 0x10000 if b & 0x8000 else b for b in bits], dtype=torch.int16).view(DT)");
  for (std::size_t k = 0; k < in.c.inputs.size(); ++k) {
    const Tensor& t = in.c.inputs[k];
    std::optional<Tensor> st = strided_storage(in.c, k, in.options.run.limits);
    if (st) {
      const auto& strides = in.c.layouts[k]->strides;
      const bool forward = std::all_of(strides.begin(), strides.end(), [](std::int64_t x) { return x >= 0; });
      if (!forward || st->size() == 0) st.reset();  // torch has no negative strides: sent dense
    }
    if (st) {
      const InputLayout& l = *in.c.layouts[k];
      s += "storage = " + flat_values(*st, "torch.frombuffer(bytearray(", "), dtype=DT)") + "\n";
      s += "inputs.append(torch.as_strided(storage, " + py_tuple(t.shape()) + ", " + py_tuple(l.strides) + ", " +
           std::to_string(l.offset) + "))\n";
    } else if (t.size() == 0) {
      s += "inputs.append(torch.empty(" + py_tuple(t.shape()) + ", dtype=DT))\n";
    } else {
      s += "inputs.append(" + flat_values(t, "torch.frombuffer(bytearray(", "), dtype=DT)") + ".reshape(" +
           py_tuple(t.shape()) + "))\n";
    }
  }
  return s;
}

/// The order in which kept axes (input order after reducing) are permuted to the output's order.
std::vector<std::int64_t> output_permutation(const CheckedReduce& r) {
  std::vector<int> kept;
  for (int a = 0; a < static_cast<int>(r.axes.size()); ++a) {
    if (std::find(r.reduced.begin(), r.reduced.end(), a) == r.reduced.end()) kept.push_back(a);
  }
  std::vector<std::int64_t> order;
  for (const auto& group : r.output_groups) {
    for (int a : group) order.push_back(std::find(kept.begin(), kept.end(), a) - kept.begin());
  }
  return order;
}

std::vector<std::int64_t> elementary_lengths(const CheckedReduce& r) {
  std::vector<std::int64_t> out;
  for (const ElementaryAxis& a : r.axes) out.push_back(a.length);
  return out;
}

Result<ReproProgram> numpy_program(const ReproInput& in) {
  const bool optimize = in.backend == "numpy-opt";
  const Case& c = in.c;
  if (numpy_dtype(c.dtype) == nullptr) {
    return not_reproducible("numpy has no " + std::string(dtype_name(c.dtype)) + " dtype: no numpy program can hold the case");
  }
  std::string call;
  if (c.op == Op::einsum) {
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    const auto sub = numpy_subscripts(c.pattern, shapes);
    if (c.dtype == DType::boolean || !sub) {
      return not_reproducible("the numpy client answers this case without calling numpy.einsum (bool dtype, more "
                              "than 52 labels, groups, unit or anonymous axes, or a pattern that does not parse)");
    }
    const auto arrow = sub->find("->");
    if (sub->substr(0, arrow).find("...") != std::string::npos && sub->find("...", arrow) == std::string::npos) {
      return not_reproducible("the numpy client does not call numpy.einsum on an input ellipsis the output omits");
    }
    call = "    result = np.asarray(np.einsum(" + py_str(*sub) + ", *inputs, optimize=" + (optimize ? "True" : "False") + "))\n";
  } else {
    if (!in.required.checked) {
      return not_reproducible("the semantics reject this reduce and the numpy client's own parser decides it before "
                              "calling numpy: nothing of numpy to reproduce");
    }
    const auto& r = std::get<CheckedReduce>(*in.required.checked);
    call = "    y = inputs[0].reshape(" + py_tuple(elementary_lengths(r)) + ")  # elementary axes, as einops does\n";
    if (!r.reduced.empty()) {
      const std::string axis = py_tuple(r.reduced);
      switch (r.kind) {
        case Reduction::sum: call += "    y = np.sum(y, axis=" + axis + ", dtype=y.dtype)\n"; break;
        case Reduction::prod: call += "    y = np.prod(y, axis=" + axis + ", dtype=y.dtype)\n"; break;
        case Reduction::mean: call += "    y = np.mean(y, axis=" + axis + ")\n"; break;
        case Reduction::min: call += "    y = np.min(y, axis=" + axis + ")\n"; break;
        case Reduction::max: call += "    y = np.max(y, axis=" + axis + ")\n"; break;
        case Reduction::any: call += "    y = np.any(y, axis=" + axis + ")\n"; break;
        case Reduction::all: call += "    y = np.all(y, axis=" + axis + ")\n"; break;
      }
    }
    call += "    y = np.transpose(np.asarray(y), " + py_list(output_permutation(r)) + ")\n";
    call += "    result = y.reshape(" + py_tuple(r.output_shape) + ")\n";
  }
  const bool logical = c.reduction && (*c.reduction == "any" || *c.reduction == "all");
  std::string s = prelude(in, "    import numpy as np\n    from numpy.lib.stride_tricks import as_strided\n",
                          std::string(optimize ? "numpy.einsum(optimize=True)" : "numpy"));
  s += "\nnp.seterr(all='ignore')  # as the client: IEEE results, no warnings\n";
  s += numpy_inputs(in);
  s += "NAMES = {np.dtype('<f4'): 'f32', np.dtype('<f8'): 'f64', np.dtype('<i4'): 'i32', np.dtype('<i8'): 'i64',\n"
       "         np.dtype(np.bool_): 'bool', np.dtype('<f2'): 'f16'}\n\n\n";
  s += "def run():\n";
  s += call;
  s += "    print('numpy %s computes dtype %s (the client converts the result to the case dtype)' % (np.__version__, result.dtype))\n";
  s += "    # The client sends the result converted to the case's dtype, as einfuzz judges it.\n";
  s += "    result = np.array(result, dtype=" + std::string(numpy_dtype(logical ? DType::boolean : c.dtype)) +
       ", order='C')\n";
  s += "    return NAMES.get(result.dtype, str(result.dtype)), tuple(result.shape), result.reshape(-1).tolist()\n";
  s += requirement_and_check(in, "numpy");
  return ReproProgram{ReproLanguage::python, std::move(s), "python3 FILE"};
}

/// The `path` argument at::einsum gets for `n` operands (torch.cpp's contraction_path).
std::vector<std::int64_t> torch_path(const std::string& backend, std::size_t n) {
  std::vector<std::int64_t> out;
  if (backend == "torch" || n < 3) return out;
  for (auto m = static_cast<std::int64_t>(n); m >= 2; --m) {
    if (backend == "torch-path-right") {
      out.insert(out.end(), {m - 2, m - 1});
    } else {
      out.insert(out.end(), {0, m - 1});
    }
  }
  return out;
}

Result<ReproProgram> torch_program(const ReproInput& in) {
  const Case& c = in.c;
  std::string call;
  if (c.op == Op::einsum) {
    const auto sub = numpy_subscripts(c.pattern);
    if (c.dtype == DType::boolean || !sub) {
      return not_reproducible("the torch adapter answers this case without calling torch (bool dtype, more than 52 "
                              "labels, groups, unit or anonymous axes, or a pattern that does not parse)");
    }
    const auto path = torch_path(in.backend, c.inputs.size());
    if (path.empty()) {
      call = "    result = torch.einsum(" + py_str(*sub) + ", *inputs)\n";
    } else {
      call = "    # torch.einsum's path argument is not public: this is the call it makes with one.\n";
      call += "    result = torch._VF.einsum(" + py_str(*sub) + ", inputs, path=" + py_list(path) + ")\n";
    }
  } else {
    if (!in.required.checked) {
      return not_reproducible("the semantics reject this reduce and the torch adapter decides it with einfuzz's "
                              "checker before calling torch: nothing of torch to reproduce");
    }
    const auto& r = std::get<CheckedReduce>(*in.required.checked);
    const std::string st = torch_dtype(c.dtype);
    call = "    t = inputs[0].reshape(" + py_tuple(elementary_lengths(r)) + ")  # elementary axes, as einops does\n";
    if (!r.reduced.empty()) {
      const std::string dims = py_list(r.reduced);
      switch (r.kind) {
        case Reduction::sum: call += "    t = torch.sum(t, " + dims + ", keepdim=False, dtype=" + st + ")\n"; break;
        case Reduction::mean: call += "    t = torch.mean(t, " + dims + ")\n"; break;
        case Reduction::min: call += "    t = torch.amin(t, " + dims + ")\n"; break;
        case Reduction::max: call += "    t = torch.amax(t, " + dims + ")\n"; break;
        case Reduction::prod:
        case Reduction::any:
        case Reduction::all: {
          call += "    # one dimension at a time, last first (as einops does with torch)\n";
          for (auto d = r.reduced.rbegin(); d != r.reduced.rend(); ++d) {
            if (r.kind == Reduction::prod) {
              call += "    t = torch.prod(t, " + std::to_string(*d) + ", False, dtype=" + st + ")\n";
            } else {
              call += "    t = torch." + std::string(r.kind == Reduction::any ? "any" : "all") + "(t, " +
                      std::to_string(*d) + ")\n";
            }
          }
          break;
        }
      }
    }
    const auto order = output_permutation(r);
    if (!order.empty()) call += "    t = t.permute(" + py_list(order) + ")\n";
    call += "    result = t.reshape(" + py_tuple(r.output_shape) + ")\n";
  }
  std::string s = prelude(in, "    import torch\n", in.backend);
  s += "\n# at::einsum from C++ (the einfuzz adapter) contracts left to right unless given a path; torch.einsum\n"
       "# would ask opt_einsum for one where it is installed.\n"
       "if hasattr(torch.backends, 'opt_einsum'):\n    torch.backends.opt_einsum.enabled = False\n";
  s += torch_inputs(in);
  s += "NAMES = {torch.float32: 'f32', torch.float64: 'f64', torch.int32: 'i32', torch.int64: 'i64', torch.bool: 'bool',\n"
       "         torch.float16: 'f16', torch.bfloat16: 'bf16'}\n\n\n";
  if (is_half(c.dtype)) {
    // As the adapter: libtorch's missing CPU kernels for the 16-bit floats (matrix products and prod
    // on Half, prod on BFloat16) are outside what it implements, not a divergence.
    s += "def call():\n" + call + "    return result\n\n\n";
    s += "def run():\n"
         "    try:\n"
         "        result = call()\n"
         "    except RuntimeError as e:\n"
         "        if 'not implemented for \\'' not in str(e):\n"
         "            raise\n"
         "        print('torch %s has no kernel here: %s' % (torch.__version__, e))\n"
         "        print('the adapter reports this as unsupported, not judged')\n"
         "        sys.exit(0)\n";
  } else {
    s += "def run():\n";
    s += call;
  }
  s += "    result = result.contiguous()\n";
  s += "    if result.dtype not in NAMES:  # the adapter reports this as unsupported, not as a divergence\n"
       "        print('torch %s returns dtype %s: unsupported, not judged' % (torch.__version__, result.dtype))\n"
       "        sys.exit(0)\n";
  s += "    print('torch', torch.__version__)\n";
  s += "    return NAMES[result.dtype], tuple(result.shape), result.reshape(-1).tolist()\n";
  s += requirement_and_check(in, "torch");
  return ReproProgram{ReproLanguage::python, std::move(s), "python3 FILE"};
}

}  // namespace

Result<ReproProgram> write_python(const ReproInput& in) {
  if (in.backend == "numpy" || in.backend == "numpy-opt") return numpy_program(in);
  return torch_program(in);
}

}  // namespace einfuzz::detail
