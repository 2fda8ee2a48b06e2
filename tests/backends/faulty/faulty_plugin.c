/* A PROTOCOL B plugin that misbehaves on purpose (protocol_tests). It answers `i -> i`-style
 * passthroughs on f64 correctly (the output is the input), except when the pattern's first label is
 * one of: segv, write, hang, alloc, twice, noout, huge, badstatus — then it does what the name says. */
#include <einfuzz/plugin.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static int starts_with(const char* s, const char* word) {
  const size_t n = strlen(word);
  return strncmp(s, word, n) == 0 && (s[n] == ' ' || s[n] == ',' || s[n] == '-' || s[n] == '\0');
}

static einfuzz_status run(const einfuzz_request* r, const einfuzz_host* host) {
  const char* p = r->pattern;
  if (r->input_count != 1 || r->dtype != EINFUZZ_F64) {
    host->set_message(host->context, NULL, "faulty plugin: one f64 input only");
    return EINFUZZ_UNSUPPORTED;
  }
  const einfuzz_tensor* in = &r->inputs[0];
  int64_t n = 1;
  for (int d = 0; d < in->rank; ++d) n *= in->shape[d];
  if (starts_with(p, "segv")) {
    volatile int* null = NULL;
    *null = 1;
    raise(SIGSEGV);
  }
  if (starts_with(p, "hang")) {
    for (volatile unsigned long i = 0;; ++i) {
    }
  }
  if (starts_with(p, "alloc")) {
    /* Runaway allocation: grab 256 MiB blocks (touching the first page of each) until refused. */
    for (int i = 0; i < 4096; ++i) {
      char* block = malloc((size_t)256 << 20);
      if (!block) abort();
      block[0] = 1;
    }
    return EINFUZZ_ERROR;
  }
  if (starts_with(p, "badstatus")) return (einfuzz_status)42;
  if (starts_with(p, "noout")) return EINFUZZ_OK;
  if (starts_with(p, "huge")) {
    const int64_t shape[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    void* out = host->alloc_output(host->context, 2, shape);
    return out ? EINFUZZ_OK : EINFUZZ_OK; /* ignores the refusal: the harness must notice */
  }
  if (starts_with(p, "write") && n > 0) ((double*)in->data)[0] = 12345.0; /* writes its input */
  double* out = host->alloc_output(host->context, in->rank, in->shape);
  if (!out) return EINFUZZ_ERROR;
  if (starts_with(p, "twice")) {
    if (host->alloc_output(host->context, in->rank, in->shape) != NULL) abort();
  }
  memcpy(out, in->data, (size_t)n * sizeof(double));
  return EINFUZZ_OK;
}

static const char* const kOps[] = {"einsum", NULL};
static const char* const kDtypes[] = {"f64", NULL};
#ifndef FAULTY_ABI_VERSION
#define FAULTY_ABI_VERSION EINFUZZ_PLUGIN_ABI_VERSION
#endif

static const einfuzz_plugin kPlugin = {FAULTY_ABI_VERSION, "faulty plugin", NULL, kOps, kDtypes, NULL,
                                       "any-order", NULL, 1, 0, "einops", run};

EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void) { return &kPlugin; }
