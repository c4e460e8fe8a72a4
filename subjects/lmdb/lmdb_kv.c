/* A key-value driver over LMDB as Debian ships it (liblmdb), unmodified: each insert is a write transaction
 * of its own, committed with LMDB's default durability (synced at commit). The check judges an environment
 * as LMDB promises to leave it after a crash: every committed transaction, and nothing torn.
 * Its command line and exit codes are those of every driver here (kv/kv_driver.h); the database is an
 * environment in one file (MDB_NOSUBDIR).
 *
 * LMDB_KV_WRITES picks how LMDB writes its pages: `map` (default) through a writable shared mapping
 * (MDB_WRITEMAP: stores, then msync at commit), `write` with pwrite(2) and fdatasync (LMDB's own default). */
#define _GNU_SOURCE
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/kv_driver.h"
#include "pmlab/trace.h"

static const size_t kMapBytes = (size_t)4 << 20;

/* The value of key #i: its index and key in text, so a value moved to another key is seen. */
static size_t value_of(uint64_t i, uint64_t key, char* out, size_t room) {
  return (size_t)snprintf(out, room, "value of #%llu, key %016llx", (unsigned long long)i, (unsigned long long)key) + 1;
}

static int open_env(const char* path, enum kv_op op, void** db) {
  const char* writes = getenv("LMDB_KV_WRITES");
  unsigned flags = MDB_NOSUBDIR;
  if (writes == NULL || strcmp(writes, "map") == 0) flags |= MDB_WRITEMAP;
  else if (strcmp(writes, "write") != 0) {
    fprintf(stderr, "lmdb-kv: LMDB_KV_WRITES is map or write, not '%s'\n", writes);
    return kExitUsage;
  }
  /* A check runs alone on its crash image: no lock file beside it. */
  if (op == KV_CHECK) flags |= MDB_NOLOCK;
  MDB_env* env = NULL;
  int rc = mdb_env_create(&env);
  if (rc == 0) rc = mdb_env_set_mapsize(env, kMapBytes);
  if (rc == 0) rc = mdb_env_open(env, path, flags, 0644);
  if (rc != 0) {
    fprintf(stderr, "lmdb-kv: cannot open %s: %s\n", path, mdb_strerror(rc));
    if (env != NULL) mdb_env_close(env);
    return kExitNoDb;
  }
  *db = env;
  return 0;
}

static void close_env(void* env) { mdb_env_close(env); }

/* Inserts keys #from..#n-1 unless present, each in a transaction of its own; `traced` marks each operation
 * for pmlab crash exec. */
static int insert(void* handle, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  MDB_env* env = handle;
  for (uint64_t i = from; i < n; ++i) {
    if (traced) pmlab_op_begin();
    MDB_txn* txn = NULL;
    MDB_dbi dbi;
    uint64_t key = kv_key(i, seed);
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
static int judge(void* handle, uint64_t n, uint64_t seed, uint64_t* present) {
  MDB_env* env = handle;
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
    uint64_t key = kv_key(m, seed);
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

int main(int argc, char** argv) {
  const struct kv_driver lmdb = {"lmdb-kv", open_env, close_env, judge, insert, 1};
  return kv_main(argc, argv, &lmdb);
}
