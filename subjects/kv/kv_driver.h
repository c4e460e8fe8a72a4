/* What the key-value drivers of the storage engines under test share (subjects/lmdb, subjects/sqlite,
 * subjects/leveldb, subjects/tdb): their command line and their keys, so that each engine is driven and
 * judged the same way.
 *
 *   DRIVER create DB             an empty database
 *   DRIVER insert DB N [SEED]    insert keys #0..#N-1, one transaction each (keys present are skipped)
 *   DRIVER check DB N [SEED]     open DB, judge it, finish the inserts, judge it again
 *
 * Exit codes: 0 done / consistent; 1 inconsistent (one line on stderr says what broke) or a failed insert;
 * 2 usage; 3 the database cannot be created or opened (create, insert). */
#ifndef PMLAB_SUBJECTS_KV_DRIVER_H
#define PMLAB_SUBJECTS_KV_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmlab/trace.h"

enum { kExitInconsistent = 1, kExitUsage = 2, kExitNoDb = 3 };

enum kv_op { KV_CREATE, KV_INSERT, KV_CHECK };

struct kv_args {
  enum kv_op op;
  const char* path;
  uint64_t n, seed;
};

/* Reads the command line of `driver`: 0, or kExitUsage with the reason on stderr. */
static inline int kv_parse(int argc, char** argv, const char* driver, struct kv_args* a) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s create DB | %s insert DB N [SEED] | %s check DB N [SEED]\n", driver, driver, driver);
    return kExitUsage;
  }
  const char* op = argv[1];
  a->op = strcmp(op, "insert") == 0 ? KV_INSERT : strcmp(op, "check") == 0 ? KV_CHECK : KV_CREATE;
  a->path = argv[2];
  const int has_n = a->op != KV_CREATE;
  if (has_n != (argc >= 4) || (a->op == KV_CREATE && strcmp(op, "create") != 0)) {
    fprintf(stderr, "%s: unknown operation or arguments for '%s'\n", driver, op);
    return kExitUsage;
  }
  char* end = NULL;
  a->n = has_n ? strtoull(argv[3], &end, 10) : 0;
  a->seed = argc == 5 ? strtoull(argv[4], NULL, 10) : 1;
  if (has_n && (end == argv[3] || *end != '\0')) {
    fprintf(stderr, "%s: N must be a whole number, not '%s'\n", driver, argv[3]);
    return kExitUsage;
  }
  return 0;
}

/* Key #i: splitmix64's finaliser of i ^ salt(seed), so keys are distinct, nonzero and unsorted. */
static inline uint64_t kv_key(uint64_t i, uint64_t seed) {
  uint64_t z = i ^ (0x8000000000000000ull | (seed * 0x9e3779b97f4a7c15ull));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Under pmlab crash exec, the inserts that had returned before the crash point (pmlab_op_end): a prefix alone
 * cannot tell a lost commit from a crash before it. 0 outside pmlab. */
static inline uint64_t kv_returned(void) {
  const char* done = getenv("PMLAB_CRASH_OPS_DONE");
  return done != NULL ? strtoull(done, NULL, 10) : 0;
}

/* Engines whose keys and values are byte strings (subjects/leveldb, subjects/tdb) share their inserts and
 * their judging: key #i is kv_key's 16 hexadecimal digits, its value its index and key in text, padded with
 * letters to `value_bytes` - 1 bytes. Such a driver gives the calls below. */
struct kv_strings {
  size_t value_bytes;
  /* Stores `value` under the 16-byte `key` as one durable write or transaction: 0, or kExitInconsistent
   * with the reason on stderr. */
  int (*put)(void* db, const char* key, const char* value, size_t length);
  /* Reads `key`: 1 with *value (to be freed with `release`) of *length bytes, 0 where it is absent, -1 with
   * the reason on stderr. */
  int (*get)(void* db, const char* key, char** value, size_t* length);
  void (*release)(char* value);
  /* How many keys the database holds, or -1 with the reason on stderr. */
  long long (*count)(void* db);
};

static inline void kv_string_key(uint64_t i, uint64_t seed, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)kv_key(i, seed));
}

static inline void kv_string_value(uint64_t i, const char* key, char* out, size_t bytes) {
  const int n = snprintf(out, bytes, "value of #%llu, key %s, ", (unsigned long long)i, key);
  for (size_t k = (size_t)n; k + 1 < bytes; ++k) out[k] = (char)('a' + (i + k) % 26);
  out[bytes - 1] = '\0';
}

/* Inserts keys #from..#n-1, each a put of its own; `traced` marks each operation for pmlab crash exec. */
static inline int kv_strings_insert(const struct kv_strings* s, void* db, uint64_t from, uint64_t n, uint64_t seed,
                                    int traced) {
  char key[17];
  char* value = malloc(s->value_bytes);
  int rc = 0;
  for (uint64_t i = from; i < n && rc == 0; ++i) {
    if (traced) pmlab_op_begin();
    kv_string_key(i, seed, key);
    kv_string_value(i, key, value, s->value_bytes);
    rc = s->put(db, key, value, strlen(value));
    if (rc != 0) fprintf(stderr, "(insert #%llu)\n", (unsigned long long)i);
    if (traced && rc == 0) pmlab_op_end();
  }
  free(value);
  return rc;
}

/* Judges the database: keys #0..#m-1 are present with their values for some m <= n, and nothing else (the
 * database counts m keys). Sets *present to m. */
static inline int kv_strings_judge(const struct kv_strings* s, void* db, uint64_t n, uint64_t seed, uint64_t* present) {
  char key[17];
  char* want = malloc(s->value_bytes);
  uint64_t m = 0;
  int verdict = 0;
  for (; m < n && verdict == 0; ++m) {
    kv_string_key(m, seed, key);
    kv_string_value(m, key, want, s->value_bytes);
    char* got = NULL;
    size_t length = 0;
    const int found = s->get(db, key, &got, &length);
    if (found == 0) break;
    if (found < 0 || length != strlen(want) || memcmp(got, want, length) != 0) {
      if (found > 0) fprintf(stderr, "key #%llu holds another value\n", (unsigned long long)m);
      verdict = kExitInconsistent;
    }
    if (found > 0) s->release(got);
  }
  free(want);
  if (verdict != 0) return verdict;
  const long long keys = s->count(db);
  if (keys < 0 || (uint64_t)keys != m) {
    if (keys >= 0)
      fprintf(stderr, "the first %llu keys present, but the database counts %lld\n", (unsigned long long)m, keys);
    return kExitInconsistent;
  }
  *present = m;
  return 0;
}

/* An engine behind a driver. */
struct kv_driver {
  const char* name;
  /* Opens the database at `path` for `op` (KV_CREATE creates it) into *db: 0, or an exit code with the
   * reason on stderr. */
  int (*open)(const char* path, enum kv_op op, void** db);
  void (*close)(void* db);
  /* Judges the database: keys #0..#m-1 present with their values for some m <= n, and nothing else; sets
   * *present to m. 0, or kExitInconsistent with the reason on stderr. */
  int (*judge)(void* db, uint64_t n, uint64_t seed, uint64_t* present);
  /* Inserts keys #from..#n-1 unless present, each in a transaction of its own; `traced` marks each one an
   * operation for pmlab crash exec. 0, or kExitInconsistent with the reason on stderr. */
  int (*insert)(void* db, uint64_t from, uint64_t n, uint64_t seed, int traced);
  int require_returned;  // the check requires every insert that had returned (kv_returned)
};

/* The check every driver makes of a crash image: the database judged, every insert that had returned
 * present (where the driver requires it), then the rest of the inserts taken and all of them held. */
static inline int kv_check(const struct kv_driver* d, void* db, uint64_t n, uint64_t seed) {
  uint64_t m = 0;
  int rc = d->judge(db, n, seed, &m);
  if (rc == 0 && d->require_returned && kv_returned() > m) {
    fprintf(stderr, "%llu keys present, but %llu inserts had returned\n", (unsigned long long)m,
            (unsigned long long)kv_returned());
    rc = kExitInconsistent;
  }
  if (rc == 0) rc = d->insert(db, m, n, seed, 0);
  if (rc == 0) rc = d->judge(db, n, seed, &m);
  if (rc == 0 && m != n) {
    fprintf(stderr, "after finishing the inserts, %llu of %llu keys present\n", (unsigned long long)m,
            (unsigned long long)n);
    rc = kExitInconsistent;
  }
  return rc;
}

/* A driver's main: the command line read, the database opened, the operation done. A check that cannot open
 * its image finds it inconsistent. */
static inline int kv_main(int argc, char** argv, const struct kv_driver* d) {
  struct kv_args a;
  int rc = kv_parse(argc, argv, d->name, &a);
  if (rc != 0) return rc;
  void* db = NULL;
  rc = d->open(a.path, a.op, &db);
  if (rc != 0) return a.op == KV_CHECK && rc == kExitNoDb ? kExitInconsistent : rc;
  if (a.op == KV_CHECK) rc = kv_check(d, db, a.n, a.seed);
  else if (a.op == KV_INSERT) rc = d->insert(db, 0, a.n, a.seed, 1);
  d->close(db);
  return rc;
}

#endif
