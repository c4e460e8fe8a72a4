/* A key-value driver over LMDB as Debian ships it (liblmdb), unmodified: each insert is a write transaction
 * of its own, committed with LMDB's default durability (synced at commit). The check judges an environment
 * as LMDB promises to leave it after a crash: every committed transaction, and nothing torn.
 *
 *   lmdb-kv create ENV             an empty environment in the file ENV (MDB_NOSUBDIR)
 *   lmdb-kv insert ENV N [SEED]    insert keys #0..#N-1, one transaction each (keys present are skipped)
 *   lmdb-kv check ENV N [SEED]     open ENV, judge it, finish the inserts, judge it again
 *
 * LMDB_KV_WRITES picks how LMDB writes its pages: `map` (default) through a writable shared mapping
 * (MDB_WRITEMAP: stores, then msync at commit), `write` with pwrite(2) and fdatasync (LMDB's own default).
 * Exit codes: 0 done / consistent; 1 inconsistent (one line on stderr says what broke) or a failed insert;
 * 2 usage; 3 the environment cannot be created or opened (create, insert). */
#define _GNU_SOURCE
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmlab/trace.h"

enum { kExitInconsistent = 1, kExitUsage = 2, kExitNoEnv = 3 };
static const size_t kMapBytes = (size_t)4 << 20;

/* Key #i: splitmix64's finaliser of i ^ salt(seed), so keys are distinct, nonzero and unsorted. */
static uint64_t key_of(uint64_t i, uint64_t seed) {
  uint64_t z = i ^ (0x8000000000000000ull | (seed * 0x9e3779b97f4a7c15ull));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The value of key #i: its index and key in text, so a value moved to another key is seen. */
static size_t value_of(uint64_t i, uint64_t key, char* out, size_t room) {
  return (size_t)snprintf(out, room, "value of #%llu, key %016llx", (unsigned long long)i, (unsigned long long)key) + 1;
}

static int open_env(const char* path, int for_check, MDB_env** env) {
  const char* writes = getenv("LMDB_KV_WRITES");
  unsigned flags = MDB_NOSUBDIR;
  if (writes == NULL || strcmp(writes, "map") == 0) flags |= MDB_WRITEMAP;
  else if (strcmp(writes, "write") != 0) {
    fprintf(stderr, "lmdb-kv: LMDB_KV_WRITES is map or write, not '%s'\n", writes);
    return kExitUsage;
  }
  /* A check runs alone on its crash image: no lock file beside it. */
  if (for_check) flags |= MDB_NOLOCK;
  int rc = mdb_env_create(env);
  if (rc == 0) rc = mdb_env_set_mapsize(*env, kMapBytes);
  if (rc == 0) rc = mdb_env_open(*env, path, flags, 0644);
  if (rc != 0) {
    fprintf(stderr, "lmdb-kv: cannot open %s: %s\n", path, mdb_strerror(rc));
    if (*env != NULL) mdb_env_close(*env);
    *env = NULL;
    return for_check ? kExitInconsistent : kExitNoEnv;
  }
  return 0;
}

/* Inserts keys #from..#n-1 unless present, each in a transaction of its own; `traced` marks each operation
 * for pmlab crash exec. */
static int insert(MDB_env* env, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  for (uint64_t i = from; i < n; ++i) {
    if (traced) pmlab_op_begin();
    MDB_txn* txn = NULL;
    MDB_dbi dbi;
    uint64_t key = key_of(i, seed);
    char value[80];
    MDB_val k = {sizeof key, &key}, v = {value_of(i, key, value, sizeof value), value};
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (rc == 0) rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (rc == 0) rc = mdb_put(txn, dbi, &k, &v, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) rc = 0;
    if (rc == 0) rc = mdb_txn_commit(txn);
    else if (txn != NULL) mdb_txn_abort(txn);
    if (rc != 0) {
      fprintf(stderr, "lmdb-kv: insert #%llu: %s\n", (unsigned long long)i, mdb_strerror(rc));
      return kExitInconsistent;
    }
    if (traced) pmlab_op_end();
  }
  return 0;
}

/* Judges the environment: keys #0..#m-1 present with their values, for some m <= n, and nothing else (a
 * cursor walks m keys, and the database's own count is m). Sets *present to m. */
static int judge(MDB_env* env, uint64_t n, uint64_t seed, uint64_t* present) {
  MDB_txn* txn = NULL;
  MDB_dbi dbi;
  MDB_stat st;
  int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, NULL, 0, &dbi);
  if (rc == 0) rc = mdb_stat(txn, dbi, &st);
  if (rc != 0) {
    fprintf(stderr, "cannot read the database: %s\n", mdb_strerror(rc));
    if (txn != NULL) mdb_txn_abort(txn);
    return kExitInconsistent;
  }
  uint64_t m = 0;
  int verdict = 0;
  for (; m < n; ++m) {
    uint64_t key = key_of(m, seed);
    char want[80];
    MDB_val k = {sizeof key, &key}, v;
    if (mdb_get(txn, dbi, &k, &v) != 0) break;
    const size_t want_size = value_of(m, key, want, sizeof want);
    if (v.mv_size != want_size || memcmp(v.mv_data, want, want_size) != 0) {
      fprintf(stderr, "key #%llu holds another value\n", (unsigned long long)m);
      verdict = kExitInconsistent;
      break;
    }
  }
  uint64_t walked = 0;
  MDB_cursor* cursor = NULL;
  if (verdict == 0 && (rc = mdb_cursor_open(txn, dbi, &cursor)) != 0) {
    fprintf(stderr, "cannot walk the database: %s\n", mdb_strerror(rc));
    verdict = kExitInconsistent;
  }
  if (cursor != NULL) {
    MDB_val k, v;
    for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
      ++walked;
    if (rc != MDB_NOTFOUND) {
      fprintf(stderr, "the walk stopped after %llu keys: %s\n", (unsigned long long)walked, mdb_strerror(rc));
      verdict = kExitInconsistent;
    }
    mdb_cursor_close(cursor);
  }
  if (verdict == 0 && (walked != m || st.ms_entries != m)) {
    fprintf(stderr, "the first %llu keys present, but a walk finds %llu keys and the database counts %llu\n",
            (unsigned long long)m, (unsigned long long)walked, (unsigned long long)st.ms_entries);
    verdict = kExitInconsistent;
  }
  mdb_txn_abort(txn);
  *present = m;
  return verdict;
}

static int check(const char* path, uint64_t n, uint64_t seed) {
  MDB_env* env = NULL;
  int rc = open_env(path, 1, &env);
  if (rc != 0) return rc;
  uint64_t m = 0;
  rc = judge(env, n, seed, &m);
  /* Under pmlab crash exec, every insert that had returned must be there: a prefix alone cannot tell a lost
   * commit from a crash before it. */
  const char* done = getenv("PMLAB_CRASH_OPS_DONE");
  if (rc == 0 && done != NULL && strtoull(done, NULL, 10) > m) {
    fprintf(stderr, "%llu keys present, but %s inserts had returned\n", (unsigned long long)m, done);
    rc = kExitInconsistent;
  }
  /* What was left must take the rest of the inserts, and hold them all. */
  if (rc == 0) rc = insert(env, m, n, seed, 0);
  if (rc == 0) rc = judge(env, n, seed, &m);
  if (rc == 0 && m != n) {
    fprintf(stderr, "after finishing the inserts, %llu of %llu keys present\n", (unsigned long long)m,
            (unsigned long long)n);
    rc = kExitInconsistent;
  }
  mdb_env_close(env);
  return rc;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: lmdb-kv create ENV | lmdb-kv insert ENV N [SEED] | lmdb-kv check ENV N [SEED]\n");
    return kExitUsage;
  }
  const char* op = argv[1];
  const char* path = argv[2];
  const int has_n = strcmp(op, "insert") == 0 || strcmp(op, "check") == 0;
  if (has_n != (argc >= 4) || (strcmp(op, "create") != 0 && !has_n)) {
    fprintf(stderr, "lmdb-kv: unknown operation or arguments for '%s'\n", op);
    return kExitUsage;
  }
  char* end = NULL;
  const uint64_t n = has_n ? strtoull(argv[3], &end, 10) : 0;
  const uint64_t seed = argc == 5 ? strtoull(argv[4], NULL, 10) : 1;
  if (has_n && (end == argv[3] || *end != '\0')) {
    fprintf(stderr, "lmdb-kv: N must be a whole number, not '%s'\n", argv[3]);
    return kExitUsage;
  }
  if (strcmp(op, "check") == 0) return check(path, n, seed);
  MDB_env* env = NULL;
  int rc = open_env(path, 0, &env);
  if (rc != 0) return rc;
  if (strcmp(op, "insert") == 0) rc = insert(env, 0, n, seed, 1);
  mdb_env_close(env);
  return rc;
}
