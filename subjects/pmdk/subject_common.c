#define _GNU_SOURCE

#include "subject_common.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <libpmemobj.h>

static int compare_key_index(const void* a, const void* b) {
  uint64_t x = ((const struct subject_key_index*)a)->key;
  uint64_t y = ((const struct subject_key_index*)b)->key;
  return (x > y) - (x < y);
}

int subject_keys_init(struct subject_keys* keys, uint64_t n, uint64_t seed) {
  keys->n = n;
  keys->seed = seed;
  keys->key = calloc(n ? n : 1, sizeof(*keys->key));
  keys->sorted = calloc(n ? n : 1, sizeof(*keys->sorted));
  if (!keys->key || !keys->sorted) {
    subject_keys_free(keys);
    return -1;
  }
  for (uint64_t i = 0; i < n; ++i) {
    keys->key[i] = subject_key(i, seed);
    keys->sorted[i].key = keys->key[i];
    keys->sorted[i].index = i;
  }
  qsort(keys->sorted, n, sizeof(*keys->sorted), compare_key_index);
  return 0;
}

void subject_keys_free(struct subject_keys* keys) {
  free(keys->key);
  free(keys->sorted);
  keys->key = NULL;
  keys->sorted = NULL;
}

int64_t subject_keys_find(const struct subject_keys* keys, uint64_t key) {
  size_t lo = 0, hi = keys->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys->sorted[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  if (lo < keys->n && keys->sorted[lo].key == key) return (int64_t)keys->sorted[lo].index;
  return -1;
}

static int compare_object(const void* a, const void* b) {
  uint64_t x = ((const struct subject_object*)a)->off;
  uint64_t y = ((const struct subject_object*)b)->off;
  return (x > y) - (x < y);
}

int subject_objects_collect(PMEMobjpool* pop, struct subject_objects* set) {
  set->obj = NULL;
  set->count = set->capacity = 0;
  PMEMoid oid;
  POBJ_FOREACH(pop, oid) {
    if (set->count == set->capacity) {
      size_t capacity = set->capacity ? 2 * set->capacity : 1024;
      struct subject_object* grown = realloc(set->obj, capacity * sizeof(*grown));
      if (!grown) return -1;
      set->obj = grown;
      set->capacity = capacity;
    }
    set->obj[set->count].off = oid.off;
    set->obj[set->count].type = pmemobj_type_num(oid);
    set->count++;
  }
  if (set->count) qsort(set->obj, set->count, sizeof(*set->obj), compare_object);
  return 0;
}

int64_t subject_objects_type(const struct subject_objects* set, uint64_t off) {
  struct subject_object key = {off, 0};
  const struct subject_object* found =
      set->count ? bsearch(&key, set->obj, set->count, sizeof(*set->obj), compare_object) : NULL;
  return found ? (int64_t)found->type : -1;
}

size_t subject_objects_count_type(const struct subject_objects* set, uint64_t type) {
  size_t n = 0;
  for (size_t i = 0; i < set->count; ++i) n += set->obj[i].type == type;
  return n;
}

void subject_objects_free(struct subject_objects* set) {
  free(set->obj);
  set->obj = NULL;
  set->count = set->capacity = 0;
}

int subject_parse_u64(const char* text, uint64_t* out) {
  if (!text || !*text || *text == '-' || *text == '+') return -1;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

int subject_parse_size(const char* text, size_t* out) {
  if (!text || !*text || *text == '-' || *text == '+') return -1;
  char* end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return -1;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k':
    case 'K':
      shift = 10;
      end++;
      break;
    case 'm':
    case 'M':
      shift = 20;
      end++;
      break;
    case 'g':
    case 'G':
      shift = 30;
      end++;
      break;
    default: return -1;
  }
  if (*end == 'i' && shift) end++;
  if ((*end == 'B' || *end == 'b') && shift) end++;
  if (*end || v > (SIZE_MAX >> shift)) return -1;
  *out = (size_t)v << shift;
  return 0;
}

const char* subject_program_name(int argc, char* argv[], const char* fallback) {
  const char* prog = argc > 0 ? argv[0] : fallback;
  const char* slash = strrchr(prog, '/');
  return slash ? slash + 1 : prog;
}

size_t subject_pool_size(const char* prog, const char* var, size_t min) {
  const char* text = getenv(var);
  if (!text || !*text) return min;
  size_t size;
  if (subject_parse_size(text, &size) || size < min)
    subject_fail(SUBJECT_USAGE, prog, "%s=%s: a pool size of at least %zu bytes (e.g. 64M) expected", var, text, min);
  return size;
}

int subject_file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

int subject_is_poolset(const char* path) {
  static const char kSignature[] = "PMEMPOOLSET";
  char head[sizeof kSignature - 1];
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  const int is = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, kSignature, sizeof head) == 0;
  fclose(f);
  return is;
}

int subject_env_is_off(const char* var) {
  const char* text = getenv(var);
  return text && strcmp(text, "0") == 0;
}

uint64_t subject_returned_inserts(void) {
  const char* text = getenv("PMLAB_CRASH_OPS_DONE");
  uint64_t n;
  if (!text || subject_env_is_off("PMDK_SUBJECT_CHECK_RETURNED") || subject_parse_u64(text, &n)) return 0;
  return n;
}

void subject_arm_kill_timer(void) {
  const char* text = getenv("PMDK_SUBJECT_KILL_AFTER_US");
  uint64_t us;
  if (!text || !*text || subject_parse_u64(text, &us) || us == 0) return;
  /* SIGALRM's default action ends the process: no handler runs, nothing is flushed or closed. */
  signal(SIGALRM, SIG_DFL);
  struct itimerval t;
  memset(&t, 0, sizeof(t));
  t.it_value.tv_sec = (time_t)(us / 1000000);
  t.it_value.tv_usec = (suseconds_t)(us % 1000000);
  setitimer(ITIMER_REAL, &t, NULL);
}

/* --- the checker's guard --------------------------------------------------------------------------- */

static const char* volatile guard_label = "checker";
static const char* volatile guard_phase = "starting";
static volatile sig_atomic_t guard_opening;
static unsigned guard_timeout_s;
static char guard_stack[1 << 16];

/* Appends NUL-terminated `s` to buf[*len..cap), async-signal-safe. */
static void guard_append(char* buf, size_t* len, size_t cap, const char* s) {
  while (*s && *len + 1 < cap) buf[(*len)++] = *s++;
}

static void guard_append_uint(char* buf, size_t* len, size_t cap, unsigned v) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < (int)sizeof(digits));
  while (n > 0 && *len + 1 < cap) buf[(*len)++] = digits[--n];
}

static void guard_handler(int sig) {
  char msg[512];
  size_t len = 0;
  const char *name, *why;
  switch (sig) {
    case SIGSEGV:
      name = "SIGSEGV";
      why = "a pointer in the pool is dangling, torn or garbage";
      break;
    case SIGBUS:
      name = "SIGBUS";
      why = "a pointer in the pool leads outside the mapping";
      break;
    case SIGFPE:
      name = "SIGFPE";
      why = "arithmetic on a corrupt field (a zero size or bucket count)";
      break;
    case SIGILL:
      name = "SIGILL";
      why = "a corrupt code pointer";
      break;
    case SIGABRT:
      name = "SIGABRT";
      why = "an assertion or abort() in the example's code";
      break;
    default:
      name = "SIGALRM";
      why = "a cycle in the structure?";
      break;
  }
  guard_append(msg, &len, sizeof(msg), guard_label);
  if (sig == SIGALRM) {
    guard_append(msg, &len, sizeof(msg), ": did not finish within ");
    guard_append_uint(msg, &len, sizeof(msg), guard_timeout_s);
    guard_append(msg, &len, sizeof(msg), " s while ");
  } else {
    guard_append(msg, &len, sizeof(msg), ": crashed with ");
    guard_append(msg, &len, sizeof(msg), name);
    guard_append(msg, &len, sizeof(msg), " while ");
  }
  guard_append(msg, &len, sizeof(msg), guard_phase);
  guard_append(msg, &len, sizeof(msg), ": ");
  guard_append(msg, &len, sizeof(msg), why);
  msg[len++] = '\n';
  ssize_t written = write(STDERR_FILENO, msg, len);
  (void)written;
  _exit(guard_opening ? SUBJECT_NO_POOL : SUBJECT_INCONSISTENT);
}

void subject_guard_install(const char* label) {
  guard_label = label;

  stack_t ss;
  memset(&ss, 0, sizeof(ss));
  ss.ss_sp = guard_stack;
  ss.ss_size = sizeof(guard_stack);
  sigaltstack(&ss, NULL); /* a cycle in a recursive traversal overflows the stack */

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = guard_handler;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); ++i) sigaction(sigs[i], &sa, NULL);

  guard_timeout_s = 60;
  const char* text = getenv("PMDK_SUBJECT_CHECK_TIMEOUT");
  uint64_t v;
  if (text && *text && subject_parse_u64(text, &v) == 0 && v <= UINT_MAX) guard_timeout_s = (unsigned)v;
  alarm(guard_timeout_s);
}

void subject_guard_phase(const char* phase, int opening) {
  guard_phase = phase;
  guard_opening = opening;
}

void subject_fail(int code, const char* label, const char* fmt, ...) {
  va_list ap;
  char msg[1024];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  /* One line, whatever the message holds (a pool path, PMDK's error text). */
  for (char* c = msg; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
  fflush(stdout);
  fprintf(stderr, "%s: %s\n", label, msg);
  exit(code);
}
