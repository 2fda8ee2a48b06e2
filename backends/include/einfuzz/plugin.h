/* einfuzz plugin ABI (PROTOCOL.md B, version 3; versions 1 and 2 still load): an in-process einsum/reduce
 * backend as a shared library with a C interface. Plain C (C99 and C++ compatible); see docs/protocol.md.
 *
 * A plugin exports one symbol, `einfuzz_plugin_entry`, returning a pointer to a static table that
 * lives as long as the library is loaded. The harness (`--backend plugin:./libmine.so`) checks
 * `abi_version`, reads the capabilities, and calls `run` once per case (and, version 2, `vjp` once
 * per VJP case). All memory crossing the boundary is owned by the harness: the request is valid only
 * during the call, and output tensors are allocated through `host->alloc_output`. A plugin must not
 * keep pointers into the request, must not write to the inputs (the harness checks), and must be
 * safe to call repeatedly from one thread. A plugin can crash the harness: `--isolate` runs it in a
 * forked worker instead.
 *
 * Version 2 appends two fields to the version-1 table (`tie_rule`, `vjp`), version 3 two more
 * (`accumulate`, `round_inputs`: the precision profile, ORACLE §8). An older table (an
 * `einfuzz_plugin_v1` or `einfuzz_plugin_v2`, returned cast to `const einfuzz_plugin*`) is read only
 * up to its own last field.
 */
#ifndef EINFUZZ_PLUGIN_H
#define EINFUZZ_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. The harness loads tables of this version and of
 *  versions 1 and 2 (EINFUZZ_PLUGIN_ABI_VERSION_1, _2); any other is refused. */
#define EINFUZZ_PLUGIN_ABI_VERSION 3
#define EINFUZZ_PLUGIN_ABI_VERSION_1 1
#define EINFUZZ_PLUGIN_ABI_VERSION_2 2

/** The name of the one exported symbol (a function of type einfuzz_plugin_entry_fn). */
#define EINFUZZ_PLUGIN_ENTRY "einfuzz_plugin_entry"

#if defined(_WIN32)
#define EINFUZZ_PLUGIN_EXPORT __declspec(dllexport)
#else
#define EINFUZZ_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/** Element types, as in PROTOCOL A: IEEE binary32/64, two's complement, one byte 0/1, and the
 *  16-bit floats (IEEE binary16; bfloat16, the upper half of a binary32), two bytes little-endian.
 *  A plugin receives F16/BF16 only when its `dtypes` list "f16"/"bf16" (any ABI version). */
typedef enum einfuzz_dtype {
  EINFUZZ_F32 = 0,
  EINFUZZ_F64 = 1,
  EINFUZZ_I32 = 2,
  EINFUZZ_I64 = 3,
  EINFUZZ_BOOL = 4,
  EINFUZZ_F16 = 5,
  EINFUZZ_BF16 = 6
} einfuzz_dtype;

/** What `run` concluded (PROTOCOL A §3: ok / error / unsupported). In C++ its underlying type is
 *  fixed to int (the type a C enum passes as), so that any value a faulty plugin returns is a value
 *  of the type, which the harness can read and judge. */
#ifdef __cplusplus
typedef enum einfuzz_status : int {
#else
typedef enum einfuzz_status {
#endif
  EINFUZZ_OK = 0,          /**< the output was allocated through alloc_output and filled */
  EINFUZZ_ERROR = 1,       /**< the plugin rejects the case (its own diagnostic) */
  EINFUZZ_UNSUPPORTED = 2  /**< outside what the plugin implements: never a disagreement */
} einfuzz_status;

/** One input operand. Dense row-major unless `strides` is non-NULL (only for plugins that declare
 *  `strided_inputs`): then element (i_0..i_{r-1}) is at ((T*)data)[Σ i_d·strides[d]], strides in
 *  elements, possibly 0 or negative. */
typedef struct einfuzz_tensor {
  int32_t rank;
  const int64_t* shape;   /**< `rank` lengths, each >= 0 (NULL when rank is 0) */
  const void* data;       /**< the values, little-endian, in the request's dtype; never NULL */
  const int64_t* strides; /**< NULL: dense row-major */
} einfuzz_tensor;

/** One supplied reduce axis length, e.g. {"h2", 2}; duplicates are passed on as given. */
typedef struct einfuzz_axis_length {
  const char* name;
  int64_t length;
} einfuzz_axis_length;

/** One case, as PROTOCOL A's request line says it. Strings are NUL-terminated UTF-8. */
typedef struct einfuzz_request {
  int64_t id;                              /**< increases by one per call */
  const char* op;                          /**< "einsum" or "reduce" */
  const char* pattern;                     /**< as written, e.g. "b i j, b j k -> b i k" */
  const char* subscripts;                  /**< numpy notation "bij,bjk->bik"; NULL for reduce or > 52 labels */
  einfuzz_dtype dtype;                     /**< of every input (and the output, except any/all: bool) */
  const char* reduction;                   /**< "sum" | "mean" | "prod" | "min" | "max" | "any" | "all"; NULL for einsum */
  const einfuzz_axis_length* axis_lengths; /**< reduce only */
  size_t axis_length_count;
  const einfuzz_tensor* inputs;
  size_t input_count;
} einfuzz_request;

/** Services the harness provides during one `run` or `vjp` call. */
typedef struct einfuzz_host {
  void* context; /**< pass back to every callback */
  /** Allocates an output (`rank` lengths; product × dtype size bytes, zero-filled) and returns
   *  its data, or NULL when the shape is refused (negative, over the harness's size limit) or no
   *  more outputs are due. In `run`: call at most once. In `vjp`: once per forward input, in input
   *  order (the k-th call is input k's cotangent, in the request's dtype). The harness owns the memory. */
  void* (*alloc_output)(void* context, int32_t rank, const int64_t* shape);
  /** Records the message of an ERROR or UNSUPPORTED answer (copied; `code` may be NULL or a
   *  SEMANTICS diagnostic code such as "rankMismatch"). */
  void (*set_message)(void* context, const char* code, const char* message);
} einfuzz_host;

typedef einfuzz_status (*einfuzz_run_fn)(const einfuzz_request* request, const einfuzz_host* host);

/** Version 2: the VJP of the forward case `request` (its `op` is the forward op, "einsum" or
 *  "reduce"; every field as for `run`) with `cotangent`, a dense tensor of the forward output's
 *  shape in the request's dtype (f32 or f64 only). EINFUZZ_OK: one output per forward input was
 *  allocated through alloc_output, in order, with that input's shape, and filled (ORACLE §7). */
typedef einfuzz_status (*einfuzz_vjp_fn)(const einfuzz_request* request, const einfuzz_tensor* cotangent,
                                         const einfuzz_host* host);

/** The version-1 table: `abi_version` EINFUZZ_PLUGIN_ABI_VERSION_1 and the fields up to `run`. */
typedef struct einfuzz_plugin_v1 {
  uint32_t abi_version;
  const char* name;
  const char* version;
  const char* const* ops;
  const char* const* dtypes;
  const char* const* reductions;
  const char* semantics;
  const char* nan_profile;
  int32_t factoring;
  int32_t strided_inputs;
  const char* notation;
  einfuzz_run_fn run;
} einfuzz_plugin_v1;

/** The version-2 table: `abi_version` EINFUZZ_PLUGIN_ABI_VERSION_2 and the fields up to `vjp`. */
typedef struct einfuzz_plugin_v2 {
  uint32_t abi_version;
  const char* name;
  const char* version;
  const char* const* ops;
  const char* const* dtypes;
  const char* const* reductions;
  const char* semantics;
  const char* nan_profile;
  int32_t factoring;
  int32_t strided_inputs;
  const char* notation;
  einfuzz_run_fn run;
  const char* tie_rule;
  einfuzz_vjp_fn vjp;
} einfuzz_plugin_v2;

/** The plugin's table (version 3). List fields are NULL-terminated arrays of strings; NULL lists
 *  and NULL strings take PROTOCOL A's defaults: ops {"einsum"}, dtypes {"f32","f64"}, reductions {},
 *  semantics "any-order", nan_profile "propagate", notation "einops", tie_rule "equal-share",
 *  every dtype accumulated in itself with its inputs as they are. The fields up to `run` are
 *  version 1's and up to `vjp` version 2's, in the same order. */
typedef struct einfuzz_plugin {
  uint32_t abi_version;             /**< EINFUZZ_PLUGIN_ABI_VERSION */
  const char* name;                 /**< e.g. "example-c einsum" */
  const char* version;              /**< free text, may be NULL */
  const char* const* ops;           /**< "einsum", "reduce" */
  const char* const* dtypes;        /**< "f32", "f64", "i32", "i64", "bool", "f16", "bf16" */
  const char* const* reductions;    /**< "sum", "mean", "prod", "min", "max", "any", "all" */
  const char* semantics;            /**< "ordered" or "any-order" */
  const char* nan_profile;          /**< "propagate", "ignore" or "ordered" */
  int32_t factoring;                /**< 1: may factor sums out of products (ORACLE §3); 0: never */
  int32_t strided_inputs;           /**< 1: accepts einfuzz_tensor.strides; 0: dense only */
  const char* notation;             /**< "einops" or "numpy" (informative) */
  einfuzz_run_fn run;               /**< never NULL */
  /* Version 2 */
  const char* tie_rule;             /**< min/max VJPs: "equal-share", "one" or "all" (ORACLE §7) */
  einfuzz_vjp_fn vjp;               /**< NULL: no VJPs; else VJP cases of the ops, dtypes and
                                         reductions above (f32/f64, never any/all) come here */
  /* Version 3: the precision profile per float dtype (PROTOCOL A's "accumulate" and "round_inputs",
   * ORACLE §8), as "DTYPE=VALUE" strings; a dtype not listed keeps the default. */
  const char* const* accumulate;    /**< e.g. {"f16=f32", "bf16=f32", NULL}: partial results held in f32 */
  const char* const* round_inputs;  /**< e.g. {"f32=tf32", NULL}: f32 inputs rounded to TF32 */
} einfuzz_plugin;

typedef const einfuzz_plugin* (*einfuzz_plugin_entry_fn)(void);

/** Implemented by the plugin: `EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void)`. */
EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* EINFUZZ_PLUGIN_H */
