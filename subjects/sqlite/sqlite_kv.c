/* A key-value driver over SQLite as Debian ships it (libsqlite3), unmodified: each insert is a transaction of
 * its own. SQLite keeps its database in files it changes with pwrite(2) and syncs with fsync and fdatasync,
 * which is what pmlab crash exec traces of a --pool file it writes. The check judges a database as SQLite
 * promises to leave it after a crash: consistent, and (when its durability promises it) every committed
 * transaction.
 * Its command line and exit codes are those of every driver here (kv/kv_driver.h).
 *
 * SQLITE_KV_JOURNAL: wal (default: a write-ahead log, DB-wal, checkpointed every 16 pages), delete (SQLite's
 * own default: a rollback journal, DB-journal, deleted to commit), truncate (the rollback journal cut to
 * nothing to commit) or persist (the rollback journal kept between transactions and cleared by zeroing its
 * header). Pass the database and its journal to pmlab as --pool. SQLITE_KV_SYNC: full (default: every
 * commit durable when it returns), normal (in WAL mode a commit may be lost in a crash, the database still
 * consistent: SQLite's documented trade) or extra (full, and a deleted journal's directory synced after it).
 * Under pmlab the check requires every insert that had returned; SQLITE_KV_CHECK_RETURNED=0 asks for a
 * consistent database only. */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/kv_driver.h"
#include "pmlab/trace.h"

/* Key #i as SQLite's signed 64-bit row id. */
static int64_t key_of(uint64_t i, uint64_t seed) { return (int64_t)(kv_key(i, seed) >> 1); }

/* The value of key #i: its index and key in text, padded so a few rows fill a page. */
static void value_of(uint64_t i, int64_t key, char* out, size_t room) {
  snprintf(out, room, "value of #%llu, key %016llx, %0200d", (unsigned long long)i, (unsigned long long)key, 0);
}

static const char* env_or(const char* name, const char* fallback) {
  const char* v = getenv(name);
  return v != NULL ? v : fallback;
}

/* Runs `sql`; 0, or an error said on stderr. */
static int exec(sqlite3* db, const char* sql) {
  char* message = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &message) == SQLITE_OK) return 0;
  fprintf(stderr, "sqlite-kv: %s: %s\n", sql, message != NULL ? message : sqlite3_errmsg(db));
  sqlite3_free(message);
  return kExitInconsistent;
}

static int open_db(const char* path, enum kv_op op, void** handle) {
  const char* journal = env_or("SQLITE_KV_JOURNAL", "wal");
  const char* sync = env_or("SQLITE_KV_SYNC", "full");
  if ((strcmp(journal, "wal") != 0 && strcmp(journal, "persist") != 0 && strcmp(journal, "delete") != 0 &&
       strcmp(journal, "truncate") != 0) ||
      (strcmp(sync, "full") != 0 && strcmp(sync, "normal") != 0 && strcmp(sync, "extra") != 0)) {
    fprintf(stderr,
            "sqlite-kv: SQLITE_KV_JOURNAL is wal, delete, truncate or persist, SQLITE_KV_SYNC full, normal or extra\n");
    return kExitUsage;
  }
  sqlite3* db = NULL;
  const int flags = SQLITE_OPEN_READWRITE | (op == KV_CREATE ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite-kv: cannot open %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return kExitNoDb;
  }
  char pragmas[160];
  snprintf(pragmas, sizeof pragmas, "PRAGMA journal_mode=%s; PRAGMA synchronous=%s; PRAGMA wal_autocheckpoint=16;",
           journal, sync);
  if (exec(db, pragmas) != 0 ||
      (op == KV_CREATE && exec(db, "CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)") != 0)) {
    sqlite3_close(db);
    return kExitNoDb;
  }
  *handle = db;
  return 0;
}

/* Inserts keys #from..#n-1 unless present, each in a transaction of its own; `traced` marks each operation
 * for pmlab crash exec. */
static int insert(void* handle, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  sqlite3* db = handle;
  sqlite3_stmt* put = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO kv (k, v) VALUES (?, ?)", -1, &put, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite-kv: cannot prepare the insert: %s\n", sqlite3_errmsg(db));
    return kExitInconsistent;
  }
  int rc = 0;
  for (uint64_t i = from; i < n && rc == 0; ++i) {
    if (traced) pmlab_op_begin();
    char value[300];
    const int64_t key = key_of(i, seed);
    value_of(i, key, value, sizeof value);
    sqlite3_bind_int64(put, 1, key);
    sqlite3_bind_text(put, 2, value, -1, SQLITE_STATIC);
    if (sqlite3_step(put) != SQLITE_DONE) {
      fprintf(stderr, "sqlite-kv: insert #%llu: %s\n", (unsigned long long)i, sqlite3_errmsg(db));
      rc = kExitInconsistent;
    }
    sqlite3_reset(put);
    if (traced && rc == 0) pmlab_op_end();
  }
  sqlite3_finalize(put);
  return rc;
}

/* Reads one integer or text cell of `sql`'s first row into *number or text; 0, or an error on stderr. */
static int query(sqlite3* db, const char* sql, int64_t* number, char* text, size_t room) {
  sqlite3_stmt* s = NULL;
  int rc = kExitInconsistent;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
    if (number != NULL) *number = sqlite3_column_int64(s, 0);
    if (text != NULL) snprintf(text, room, "%s", (const char*)sqlite3_column_text(s, 0));
    rc = 0;
  } else {
    fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
  }
  sqlite3_finalize(s);
  return rc;
}

/* Judges the database: SQLite's own integrity check passes, keys #0..#m-1 are present with their values for
 * some m <= n, and nothing else (the table counts m rows). Sets *present to m. */
static int judge(void* handle, uint64_t n, uint64_t seed, uint64_t* present) {
  sqlite3* db = handle;
  char integrity[200];
  if (query(db, "PRAGMA integrity_check", NULL, integrity, sizeof integrity) != 0) return kExitInconsistent;
  if (strcmp(integrity, "ok") != 0) {
    fprintf(stderr, "integrity check: %s\n", integrity);
    return kExitInconsistent;
  }
  sqlite3_stmt* get = NULL;
  if (sqlite3_prepare_v2(db, "SELECT v FROM kv WHERE k = ?", -1, &get, NULL) != SQLITE_OK) {
    fprintf(stderr, "cannot read the table: %s\n", sqlite3_errmsg(db));
    return kExitInconsistent;
  }
  uint64_t m = 0;
  int verdict = 0;
  for (; m < n; ++m) {
    const int64_t key = key_of(m, seed);
    sqlite3_bind_int64(get, 1, key);
    const int step = sqlite3_step(get);
    if (step != SQLITE_ROW) {
      sqlite3_reset(get);
      break;
    }
    char want[300];
    value_of(m, key, want, sizeof want);
    const int same = strcmp((const char*)sqlite3_column_text(get, 0), want) == 0;
    sqlite3_reset(get);
    if (!same) {
      fprintf(stderr, "key #%llu holds another value\n", (unsigned long long)m);
      verdict = kExitInconsistent;
      break;
    }
  }
  sqlite3_finalize(get);
  int64_t rows = 0;
  if (verdict == 0 && query(db, "SELECT count(*) FROM kv", &rows, NULL, 0) != 0) verdict = kExitInconsistent;
  if (verdict == 0 && (uint64_t)rows != m) {
    fprintf(stderr, "the first %llu keys present, but the table counts %lld rows\n", (unsigned long long)m,
            (long long)rows);
    verdict = kExitInconsistent;
  }
  *present = m;
  return verdict;
}

static void close_db(void* db) { sqlite3_close(db); }

int main(int argc, char** argv) {
  const int returned = strcmp(env_or("SQLITE_KV_CHECK_RETURNED", "1"), "0") != 0;
  const struct kv_driver sqlite = {"sqlite-kv", open_db, close_db, judge, insert, returned};
  return kv_main(argc, argv, &sqlite);
}
