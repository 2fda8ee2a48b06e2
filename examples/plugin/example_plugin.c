/* An example einfuzz plugin (PROTOCOL B, ABI version 3) in plain C: a small, obviously-right einsum
 * for f32/f64 and for f16/bf16 (each product and sum in f32, rounded to the 16-bit format once at
 * the end, which its table declares: accumulate f32, ORACLE §8) over numpy-notation subscripts (no
 * ellipsis), with size-1 broadcasting and diagonals, and its VJP (f32/f64, one cotangent per
 * operand); anything else is answered EINFUZZ_UNSUPPORTED.
 * Build: cc -shared -fPIC -I backends/include example_plugin.c
 * With -DEXAMPLE_PLUGIN_ABI_V1 it is the same einsum as a version-1 table (no VJP, no 16-bit
 * dtypes), which the harness still loads.
 */
#include <einfuzz/plugin.h>

#include <stdint.h>
#include <string.h>

#define MAX_LABELS 52
#define MAX_OPERANDS 32
#define MAX_RANK 32

static int label_index(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

static einfuzz_status answer(const einfuzz_host* host, einfuzz_status status, const char* message) {
  host->set_message(host->context, NULL, message);
  return status;
}

/* One operand's labels, as indices into the label table. */
typedef struct operand {
  int labels[MAX_RANK];
  int rank;
} operand;

/* Splits "ab,bc->ac" into operands and output; 0 on success, else an error message. */
static const char* parse(const char* s, operand* ops, int* op_count, operand* out) {
  const char* arrow = strstr(s, "->");
  if (!arrow) return "the subscripts have no '->'";
  int k = 0;
  ops[0].rank = 0;
  for (const char* p = s; p < arrow; ++p) {
    if (*p == ',') {
      if (++k >= MAX_OPERANDS) return "too many operands for this example";
      ops[k].rank = 0;
      continue;
    }
    const int l = label_index(*p);
    if (l < 0) return "unexpected character in the subscripts";
    if (ops[k].rank >= MAX_RANK) return "operand rank too large for this example";
    ops[k].labels[ops[k].rank++] = l;
  }
  *op_count = k + 1;
  out->rank = 0;
  for (const char* p = arrow + 2; *p; ++p) {
    const int l = label_index(*p);
    if (l < 0) return "unexpected character in the output subscripts";
    if (out->rank >= MAX_RANK) return "output rank too large for this example";
    out->labels[out->rank++] = l;
  }
  return 0;
}

static float float_of_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* IEEE binary16 to binary32, exactly. */
static float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) { /* zero or subnormal: mantissa * 2^-24, exact in binary32 */
    const float magnitude = (float)mantissa * float_of_bits(0x33800000u);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_of_bits(sign | 0x7f800000u | (mantissa << 13)); /* inf, NaN */
  return float_of_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/* binary32 to binary16, rounded to nearest, ties to even (overflow to inf, NaN stays NaN). */
static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (x >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and above round to inf */
  if (x < 0x38800000u) {                                     /* below 2^-14: a subnormal result */
    /* |f| * 2^24 (exact) rounded to an integer by binary32's own ties-to-even addition. */
    const float scaled = float_of_bits(x) * 16777216.0f;
    const uint32_t m = (uint32_t)((scaled + 8388608.0f) - 8388608.0f);
    return (uint16_t)(sign | m); /* m = 1024 is the smallest normal, as it should be */
  }
  const uint32_t rounded = x + 0xfffu + ((x >> 13) & 1u) - 0x38000000u; /* rebias 127 -> 15 */
  return (uint16_t)(sign | (rounded >> 13));
}

/* bfloat16 (the upper half of a binary32) both ways. */
static float bf16_to_float(uint16_t b) { return float_of_bits((uint32_t)b << 16); }
static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u); /* NaN stays NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static int is_16_bit(einfuzz_dtype dtype) { return dtype == EINFUZZ_F16 || dtype == EINFUZZ_BF16; }

/* Reads element `flat` of a dense tensor as double (every dtype here widens exactly). */
static double read_value(const void* data, einfuzz_dtype dtype, int64_t flat) {
  switch (dtype) {
    case EINFUZZ_F32: return (double)((const float*)data)[flat];
    case EINFUZZ_F16: return (double)half_to_float(((const uint16_t*)data)[flat]);
    case EINFUZZ_BF16: return (double)bf16_to_float(((const uint16_t*)data)[flat]);
    default: return ((const double*)data)[flat];
  }
}

/* The number of index tuples over `count` labels. A zero length empties the space, and the other
 * lengths' product may then overflow int64_t (the harness bounds only non-empty spaces): it is
 * never formed. */
static int64_t space_size(const int64_t* length, const int* labels, int count) {
  for (int i = 0; i < count; ++i) {
    if (length[labels[i]] == 0) return 0;
  }
  int64_t size = 1;
  for (int i = 0; i < count; ++i) size *= length[labels[i]];
  return size;
}

/* One checked einsum: operands, output, label lengths and the contracted labels. */
typedef struct einsum {
  operand ops[MAX_OPERANDS];
  operand out;
  int op_count;
  int64_t length[MAX_LABELS];
  int64_t out_shape[MAX_RANK];
  int contracted[MAX_LABELS];
  int c_count;
} einsum;

/* Checks the request as an einsum this example evaluates and fills `e`; EINFUZZ_OK or the answer. */
static einfuzz_status prepare(const einfuzz_request* r, const einfuzz_host* host, einsum* e) {
  if (strcmp(r->op, "einsum") != 0) return answer(host, EINFUZZ_UNSUPPORTED, "this example does einsum only");
  if (r->dtype != EINFUZZ_F32 && r->dtype != EINFUZZ_F64 && !is_16_bit(r->dtype)) {
    return answer(host, EINFUZZ_UNSUPPORTED, "this example does f32, f64, f16 and bf16 only");
  }
  if (!r->subscripts) return answer(host, EINFUZZ_UNSUPPORTED, "the pattern has no numpy spelling");
  if (strstr(r->subscripts, "...")) return answer(host, EINFUZZ_UNSUPPORTED, "this example has no ellipsis");

  const char* why = parse(r->subscripts, e->ops, &e->op_count, &e->out);
  if (why) return answer(host, EINFUZZ_UNSUPPORTED, why);
  if ((size_t)e->op_count != r->input_count) return answer(host, EINFUZZ_ERROR, "operand count differs from the inputs");

  /* Lengths: the first occurrence != 1 decides (size-1 broadcasting); a repeated label inside one
   * operand must match exactly. */
  int used[MAX_LABELS] = {0};
  int first_seen[MAX_LABELS];
  int order = 0;
  for (int l = 0; l < MAX_LABELS; ++l) e->length[l] = -1;
  for (int k = 0; k < e->op_count; ++k) {
    const einfuzz_tensor* t = &r->inputs[k];
    if (t->rank != e->ops[k].rank) return answer(host, EINFUZZ_ERROR, "an operand's rank differs from its subscripts");
    for (int d = 0; d < t->rank; ++d) {
      const int l = e->ops[k].labels[d];
      for (int f = 0; f < d; ++f) {
        if (e->ops[k].labels[f] == l && t->shape[f] != t->shape[d]) {
          return answer(host, EINFUZZ_ERROR, "a repeated label has different lengths in one operand");
        }
      }
      if (!used[l]) {
        used[l] = 1;
        first_seen[l] = order++;
      }
      if (e->length[l] == -1 || e->length[l] == 1) e->length[l] = t->shape[d];
    }
  }
  for (int k = 0; k < e->op_count; ++k) {
    for (int d = 0; d < r->inputs[k].rank; ++d) {
      const int64_t n = r->inputs[k].shape[d];
      if (n != 1 && n != e->length[e->ops[k].labels[d]]) return answer(host, EINFUZZ_ERROR, "incompatible broadcast");
    }
  }
  int in_output[MAX_LABELS] = {0};
  for (int d = 0; d < e->out.rank; ++d) {
    const int l = e->out.labels[d];
    if (!used[l]) return answer(host, EINFUZZ_ERROR, "an output label appears in no operand");
    if (in_output[l]) return answer(host, EINFUZZ_ERROR, "an output label appears twice");
    in_output[l] = 1;
    e->out_shape[d] = e->length[l];
  }
  /* Contracted labels in first-appearance order (the first one outermost). */
  e->c_count = 0;
  for (int rank = 0; rank < order; ++rank) {
    for (int l = 0; l < MAX_LABELS; ++l) {
      if (used[l] && first_seen[l] == rank && !in_output[l]) e->contracted[e->c_count++] = l;
    }
  }
  return EINFUZZ_OK;
}

/* Sets index[] for output element `o` and contraction step `c` (row-major, last label fastest). */
static void set_index(const einsum* e, int64_t o, int64_t c, int64_t* index) {
  int64_t rest = o;
  for (int d = e->out.rank - 1; d >= 0; --d) {
    index[e->out.labels[d]] = rest % e->out_shape[d];
    rest /= e->out_shape[d];
  }
  rest = c;
  for (int i = e->c_count - 1; i >= 0; --i) {
    const int64_t n = e->length[e->contracted[i]];
    index[e->contracted[i]] = rest % n;
    rest /= n;
  }
}

/* The flat position in operand k of the element index[] selects (a size-1 dimension broadcasts). */
static int64_t operand_flat(const einsum* e, const einfuzz_tensor* t, int k, const int64_t* index) {
  int64_t flat = 0;
  for (int d = 0; d < t->rank; ++d) {
    const int64_t coord = t->shape[d] == 1 ? 0 : index[e->ops[k].labels[d]];
    flat = flat * t->shape[d] + coord;
  }
  return flat;
}

static einfuzz_status run(const einfuzz_request* r, const einfuzz_host* host) {
  einsum e;
  const einfuzz_status prepared = prepare(r, host, &e);
  if (prepared != EINFUZZ_OK) return prepared;
  void* result = host->alloc_output(host->context, e.out.rank, e.out_shape);
  if (!result) return answer(host, EINFUZZ_ERROR, "the harness refused the output shape");
  const int64_t out_size = space_size(e.length, e.out.labels, e.out.rank);
  const int64_t c_size = space_size(e.length, e.contracted, e.c_count);

  int64_t index[MAX_LABELS] = {0};
  for (int64_t o = 0; o < out_size; ++o) {
    double acc64 = 0.0;
    float acc32 = 0.0f;
    for (int64_t c = 0; c < c_size; ++c) {
      set_index(&e, o, c, index);
      double term64 = 1.0;
      float term32 = 1.0f;
      for (int k = 0; k < e.op_count; ++k) {
        const einfuzz_tensor* t = &r->inputs[k];
        const double v = read_value(t->data, r->dtype, operand_flat(&e, t, k, index));
        term64 *= v;
        term32 *= (float)v;
      }
      acc64 += term64;
      acc32 += term32;
    }
    if (r->dtype == EINFUZZ_F32) {
      ((float*)result)[o] = acc32;
    } else if (r->dtype == EINFUZZ_F16) {
      ((uint16_t*)result)[o] = float_to_half(acc32); /* held in f32, rounded once */
    } else if (r->dtype == EINFUZZ_BF16) {
      ((uint16_t*)result)[o] = float_to_bf16(acc32);
    } else {
      ((double*)result)[o] = acc64;
    }
  }
  return EINFUZZ_OK;
}

#ifndef EXAMPLE_PLUGIN_ABI_V1
/* The VJP (ORACLE §7): for operand m, every global assignment adds g[out] times the product of the
 * other operands to the element of m it selects (a broadcast dimension collects the whole sum). */
static einfuzz_status vjp(const einfuzz_request* r, const einfuzz_tensor* g, const einfuzz_host* host) {
  if (is_16_bit(r->dtype)) return answer(host, EINFUZZ_UNSUPPORTED, "this example's VJPs are f32 and f64 only");
  einsum e;
  const einfuzz_status prepared = prepare(r, host, &e);
  if (prepared != EINFUZZ_OK) return prepared;
  void* grads[MAX_OPERANDS];
  for (int m = 0; m < e.op_count; ++m) {
    grads[m] = host->alloc_output(host->context, r->inputs[m].rank, r->inputs[m].shape);
    if (!grads[m]) return answer(host, EINFUZZ_ERROR, "the harness refused a cotangent's shape");
  }
  const int64_t out_size = space_size(e.length, e.out.labels, e.out.rank);
  const int64_t c_size = space_size(e.length, e.contracted, e.c_count);
  int64_t index[MAX_LABELS] = {0};
  for (int m = 0; m < e.op_count; ++m) {
    for (int64_t o = 0; o < out_size; ++o) {
      for (int64_t c = 0; c < c_size; ++c) {
        set_index(&e, o, c, index);
        double term64 = read_value(g->data, r->dtype, o);
        float term32 = (float)term64;
        for (int k = 0; k < e.op_count; ++k) {
          if (k == m) continue;
          const einfuzz_tensor* t = &r->inputs[k];
          const double v = read_value(t->data, r->dtype, operand_flat(&e, t, k, index));
          term64 *= v;
          term32 *= (float)v;
        }
        const int64_t p = operand_flat(&e, &r->inputs[m], m, index);
        if (r->dtype == EINFUZZ_F32) {
          ((float*)grads[m])[p] += term32;
        } else {
          ((double*)grads[m])[p] += term64;
        }
      }
    }
  }
  return EINFUZZ_OK;
}
#endif

static const char* const kOps[] = {"einsum", NULL};
#ifdef EXAMPLE_PLUGIN_ABI_V1
static const char* const kDtypes[] = {"f32", "f64", NULL};
/* A version-1 table ends at `run`; its address is returned as the entry's type says. */
static const einfuzz_plugin_v1 kPluginV1 = {
    EINFUZZ_PLUGIN_ABI_VERSION_1, "example-c einsum (ABI 1)", "1.0", kOps, kDtypes, NULL, "any-order", "propagate", 0, 0,
    "numpy", run,
};

EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void) { return (const einfuzz_plugin*)&kPluginV1; }
#else
static const char* const kDtypes[] = {"f32", "f64", "f16", "bf16", NULL};
/* ORACLE §8's profile of the 16-bit dtypes: partial results (and products) in f32. */
static const char* const kAccumulate[] = {"f16=f32", "bf16=f32", NULL};

static const einfuzz_plugin kPlugin = {
    EINFUZZ_PLUGIN_ABI_VERSION,
    "example-c einsum",
    "3.0",
    kOps,
    kDtypes,
    NULL,        /* no reductions */
    "any-order", /* sequential in fact, but any correct order is all it promises */
    "propagate",
    0, /* never factors sums out of products */
    0, /* dense inputs only */
    "numpy",
    run,
    "equal-share", /* unused: no min/max */
    vjp,           /* einsum VJPs */
    kAccumulate,
    NULL, /* inputs as they are */
};

EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void) { return &kPlugin; }
#endif
