/* A key-value driver over TDB, Samba's trivial database, as Debian ships it (libtdb), unmodified: each insert
 * is a transaction of its own. TDB maps its file shared, further than the file reaches, writes it through
 * the mapping and with pwrite(2), grows it with posix_fallocate, and commits a transaction by writing an undo
 * record (its recovery area), syncing, writing the new data, syncing, and clearing the undo record's magic;
 * opening the file rolls back a transaction whose undo record is still whole. What pmlab crash exec traces
 * of a --pool file.
 * Its command line and exit codes are those of every driver here (kv/kv_driver.h).
 *
 * TDB_KV_NOSYNC=1 opens the database TDB_NOSYNC: transactions commit without syncing, and a crash may lose
 * or tear them. The check judges the database through TDB's own open (which recovers it), reads and
 * traversal, not tdb_check: that one also scans the free space a grown file has not padded yet, which a crash
 * can leave. Under pmlab it requires every insert that had returned where commits sync. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tdb.h>

#include "kv/kv_driver.h"

static TDB_DATA datum(const char* bytes, size_t n) {
  TDB_DATA d = {(unsigned char*)(uintptr_t)bytes, n};
  return d;
}

static bool no_sync(void) {
  const char* v = getenv("TDB_KV_NOSYNC");
  return v != NULL && strcmp(v, "1") == 0;
}

static int open_db(const char* path, enum kv_op op, void** handle) {
  struct tdb_context* tdb =
      tdb_open(path, 0, no_sync() ? TDB_NOSYNC : TDB_DEFAULT, O_RDWR | (op == KV_CREATE ? O_CREAT : 0), 0600);
  if (tdb == NULL) {
    fprintf(stderr, "tdb-kv: cannot open %s: %s\n", path, strerror(errno));
    return kExitNoDb;
  }
  *handle = tdb;
  return 0;
}

static void close_db(void* tdb) { tdb_close(tdb); }

/* One transaction. */
static int put(void* handle, const char* key, const char* value, size_t length) {
  struct tdb_context* tdb = handle;
  if (tdb_transaction_start(tdb) == 0 && tdb_store(tdb, datum(key, 16), datum(value, length), TDB_REPLACE) == 0 &&
      tdb_transaction_commit(tdb) == 0)
    return 0;
  fprintf(stderr, "tdb-kv: %s\n", tdb_errorstr(tdb));
  return kExitInconsistent;
}

static int get(void* handle, const char* key, char** value, size_t* length) {
  TDB_DATA got = tdb_fetch(handle, datum(key, 16));
  *value = (char*)got.dptr;
  *length = got.dsize;
  return got.dptr != NULL;
}

static void release(char* value) { free(value); }

/* A traversal of every record. */
static long long count(void* handle) {
  const int records = tdb_traverse(handle, NULL, NULL);
  if (records < 0) fprintf(stderr, "a traversal fails: %s\n", tdb_errorstr(handle));
  return records;
}

static const struct kv_strings kStrings = {300, put, get, release, count};

static int insert(void* db, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  return kv_strings_insert(&kStrings, db, from, n, seed, traced);
}
static int judge(void* db, uint64_t n, uint64_t seed, uint64_t* present) {
  return kv_strings_judge(&kStrings, db, n, seed, present);
}

int main(int argc, char** argv) {
  const struct kv_driver tdb = {"tdb-kv", open_db, close_db, judge, insert, !no_sync()};
  return kv_main(argc, argv, &tdb);
}
