/* A PROTOCOL B plugin that misbehaves on purpose (protocol_tests, survive_test.sh). It answers
 * `i -> i`-style passthroughs on f64 correctly (the output is the input), except when the pattern's
 * first label is one of: segv, write, hang, alloc, twice, noout, huge, badstatus, abort, exit0,
 * badtext — then it does what the name says (badtext: a rejection whose message has invalid UTF-8,
 * control characters and a multi-byte character across byte 2000). The environment variable
 * EINFUZZ_FAULTY_MODE=WORD does the same on every case (for campaigns, whose patterns are drawn),
 * EINFUZZ_FAULTY_NAME sets the name the table reports (e.g. to bytes that are not UTF-8), and
 * EINFUZZ_FAULTY_MARK=FILE is created when a `hang` begins (so a test signals a hung run).
 * More words: reshape (adds 1 to the first length it was told and renames the pattern's first
 * label, writing through the request's pointers, then answers that shape), busy (takes 2 ms and
 * answers zeros when another call was in progress meanwhile: plugin.h allows one thread at a
 * time), stdout (prints to standard output, then answers), bigout (asks for a 100000-element
 * output, within the size limits but far beyond the case's, and returns EINFUZZ_ERROR when it is
 * refused), forkhold (forks a child that sleeps
 * 30 s holding every descriptor, then answers), id (answers unsupported, its message the
 * request's id: `id 7`), closefds (closes every descriptor from 3 to 1023, as daemons do, then
 * answers), stale (answers right on the library's first stale call, zeros on every later one: a
 * cache that outlives its case). EINFUZZ_FAULTY_UNLOAD=exit0 makes the
 * library's destructor call _exit(0) when it is unloaded. */
#define _POSIX_C_SOURCE 200809L /* _exit */
#include <einfuzz/plugin.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_in_progress = 0; /* calls in progress (busy) */
static long g_stale_calls = 0; /* stale calls answered by this copy of the library */

__attribute__((destructor)) static void unload(void) {
  const char* how = getenv("EINFUZZ_FAULTY_UNLOAD");
  if (how && strcmp(how, "exit0") == 0) _exit(0);
}

static int starts_with(const char* s, const char* word) {
  const size_t n = strlen(word);
  return strncmp(s, word, n) == 0 && (s[n] == ' ' || s[n] == ',' || s[n] == '-' || s[n] == '\0');
}

static einfuzz_status run(const einfuzz_request* r, const einfuzz_host* host) {
  const char* mode = getenv("EINFUZZ_FAULTY_MODE");
  const char* p = mode && *mode ? mode : r->pattern;
  if (starts_with(p, "exit0")) _exit(0); /* must never look like a pass */
  if (starts_with(p, "abort")) abort();
  if (mode && *mode && starts_with(p, "segv")) raise(SIGSEGV);
  if (mode && *mode && starts_with(p, "hang")) {
    const char* mark = getenv("EINFUZZ_FAULTY_MARK");
    if (mark && *mark) {
      FILE* f = fopen(mark, "w");
      if (f) fclose(f);
    }
    for (volatile unsigned long i = 0;; ++i) {
    }
  }
  if (starts_with(p, "badtext")) {
    /* 1998 'x', then U+00E9 (2 bytes) straddling byte 2000, then a lone 0xff, ESC and a newline. */
    static char message[2100];
    memset(message, 'x', 1999);
    message[1999] = (char)0xc3;
    message[2000] = (char)0xa9;
    message[2001] = (char)0xff;
    message[2002] = '\033';
    message[2003] = '\n';
    strcpy(message + 2004, "tail");
    host->set_message(host->context, "bad\xff\033code", message);
    return EINFUZZ_ERROR;
  }
  if (starts_with(p, "id")) {
    char message[64];
    snprintf(message, sizeof message, "id %lld", (long long)r->id);
    host->set_message(host->context, NULL, message);
    return EINFUZZ_UNSUPPORTED;
  }
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
  if (starts_with(p, "forkhold") && fork() == 0) { /* a child that keeps every descriptor for 30 s */
    const struct timespec wait = {30, 0};
    nanosleep(&wait, NULL);
    _exit(0);
  }
  if (starts_with(p, "bigout")) { /* within the size limits, far more than the case's answer */
    const int64_t shape[1] = {100000};
    return host->alloc_output(host->context, 1, shape) ? EINFUZZ_OK : EINFUZZ_ERROR; /* gives up, refused */
  }
  if (starts_with(p, "huge")) {
    const int64_t shape[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    void* out = host->alloc_output(host->context, 2, shape);
    return out ? EINFUZZ_OK : EINFUZZ_OK; /* ignores the refusal: the harness must notice */
  }
  if (starts_with(p, "write") && n > 0) ((double*)in->data)[0] = 12345.0; /* writes its input */
  if (starts_with(p, "reshape") && in->rank > 0) {
    ((int64_t*)in->shape)[0] += 1;
    ((char*)r->pattern)[0] = 'q';
    double* grown = host->alloc_output(host->context, in->rank, in->shape);
    return grown ? EINFUZZ_OK : EINFUZZ_ERROR;
  }
  if (starts_with(p, "closefds")) {
    for (int fd = 3; fd < 1024; ++fd) close(fd);
  }
  if (starts_with(p, "stdout")) {
    fputs("faulty plugin: this line is on standard output\n", stdout);
    fflush(stdout);
  }
  int overlapped = 0;
  if (starts_with(p, "busy")) {
    overlapped = __atomic_add_fetch(&g_in_progress, 1, __ATOMIC_SEQ_CST) > 1;
    const struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    overlapped |= __atomic_load_n(&g_in_progress, __ATOMIC_SEQ_CST) > 1;
    __atomic_sub_fetch(&g_in_progress, 1, __ATOMIC_SEQ_CST);
  }
  double* out = host->alloc_output(host->context, in->rank, in->shape);
  if (!out) return EINFUZZ_ERROR;
  if (starts_with(p, "stale") && g_stale_calls++ > 0) overlapped = 1; /* answers zeros */
  if (overlapped) {
    memset(out, 0, (size_t)n * sizeof(double));
    return EINFUZZ_OK;
  }
  if (starts_with(p, "twice")) {
    if (host->alloc_output(host->context, in->rank, in->shape) != NULL) abort();
  }
  memcpy(out, in->data, (size_t)n * sizeof(double));
  return EINFUZZ_OK;
}

static const char* const kOps[] = {"einsum", NULL};
static const char* const kDtypes[] = {"f64", NULL};
#ifndef FAULTY_ABI_VERSION
#define FAULTY_ABI_VERSION EINFUZZ_PLUGIN_ABI_VERSION_1
#endif

#ifdef FAULTY_ABI_V2
/* The VJP of the passthrough (the cotangent itself), broken when the pattern's first label is
 * `few` (EINFUZZ_OK with no output allocated) or `many` (a second output asked for, which the
 * harness refuses, then EINFUZZ_OK). */
static einfuzz_status vjp(const einfuzz_request* r, const einfuzz_tensor* g, const einfuzz_host* host) {
  if (r->input_count != 1 || r->dtype != EINFUZZ_F64) {
    host->set_message(host->context, NULL, "faulty plugin: one f64 input only");
    return EINFUZZ_UNSUPPORTED;
  }
  if (starts_with(r->pattern, "few")) return EINFUZZ_OK;
  const einfuzz_tensor* in = &r->inputs[0];
  double* out = host->alloc_output(host->context, in->rank, in->shape);
  if (!out) return EINFUZZ_ERROR;
  if (starts_with(r->pattern, "many")) (void)host->alloc_output(host->context, in->rank, in->shape);
  int64_t n = 1;
  for (int d = 0; d < g->rank; ++d) n *= g->shape[d];
  memcpy(out, g->data, (size_t)n * sizeof(double));
  return EINFUZZ_OK;
}

#ifndef FAULTY_TIE_RULE
#define FAULTY_TIE_RULE "one"
#endif
/* A version-2 table with a VJP entry (ABI 2 plugins keep loading under ABI 3). */
static einfuzz_plugin_v2 kPlugin = {EINFUZZ_PLUGIN_ABI_VERSION_2, "faulty plugin (ABI 2)", NULL, kOps, kDtypes, NULL,
                                    "any-order", NULL, 1, 0, "einops", run, FAULTY_TIE_RULE, vjp};
#elif defined(FAULTY_ACCUMULATE)
/* A version-3 table whose precision profile is FAULTY_ACCUMULATE and FAULTY_ROUND_INPUTS. */
#ifndef FAULTY_ROUND_INPUTS
#define FAULTY_ROUND_INPUTS NULL
#endif
static const char* const kAccumulate[] = {FAULTY_ACCUMULATE, NULL};
static const char* const kRoundInputs[] = {FAULTY_ROUND_INPUTS, NULL};
static einfuzz_plugin kPlugin = {EINFUZZ_PLUGIN_ABI_VERSION, "faulty plugin (ABI 3)", NULL, kOps, kDtypes, NULL,
                                 "any-order", NULL, 1, 0, "einops", run, NULL, NULL, kAccumulate, kRoundInputs};
#else
/* A version-1 table (ABI 1 plugins keep loading under ABI 3). */
static einfuzz_plugin_v1 kPlugin = {FAULTY_ABI_VERSION, "faulty plugin", NULL, kOps, kDtypes, NULL,
                                       "any-order", NULL, 1, 0, "einops", run};
#endif

EINFUZZ_PLUGIN_EXPORT const einfuzz_plugin* einfuzz_plugin_entry(void) {
  const char* name = getenv("EINFUZZ_FAULTY_NAME");
  if (name && *name) kPlugin.name = name;
  /* Declarations a harness must refuse, per test (EINFUZZ_FAULTY_SEMANTICS=Ordered, ...). */
  const char* semantics = getenv("EINFUZZ_FAULTY_SEMANTICS");
  if (semantics) kPlugin.semantics = semantics;
  const char* nan_profile = getenv("EINFUZZ_FAULTY_NAN_PROFILE");
  if (nan_profile) kPlugin.nan_profile = nan_profile;
  const char* notation = getenv("EINFUZZ_FAULTY_NOTATION");
  if (notation) kPlugin.notation = notation;
  return (const einfuzz_plugin*)&kPlugin;
}
