/* A key-value driver over LevelDB as Debian ships it (libleveldb), unmodified, through its C API: each insert
 * is a write of its own. LevelDB is a log-structured merge tree that names its files as it goes: a log of
 * the writes (NNNNNN.log, each record checksummed), tables the memtable is flushed and compacted into
 * (NNNNNN.ldb, by a thread of its own), and a manifest of which tables make the database (MANIFEST-NNNNNN),
 * named by CURRENT, which it replaces by renaming a temporary file over it. It writes them with write(2) and
 * syncs them with fdatasync and fsync, and reads the tables through read-only mappings: what pmlab crash
 * exec traces of the files of a --pool directory. Pass the database's directory as --pool; the check opens
 * the crash directory as the database ({} names it).
 * Its command line and exit codes are those of every driver here (kv/kv_driver.h).
 *
 * LEVELDB_KV_SYNC: 1 (default: each write synced before it returns, LevelDB's WriteOptions.sync) or 0 (not:
 * a crash may lose writes that had returned, the database still consistent, as LevelDB documents).
 * LEVELDB_KV_BUFFER: the memtable's size in bytes (default and least 64 KiB: 16 inserts fill it, and
 * LevelDB flushes it into a table, edits its manifest and compacts, all crash-tested). Under pmlab the check
 * requires every insert that had returned where writes are synced. */
#define _GNU_SOURCE
#include <leveldb/c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/kv_driver.h"

struct db {
  leveldb_t* db;
  leveldb_options_t* options;
  leveldb_writeoptions_t* write;
  leveldb_readoptions_t* read;
};

/* Values of 4 KiB, so that 16 fill LevelDB's smallest memtable (64 KiB). */
enum { kValueBytes = 4096 };

static uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : fallback;
}

static void close_db(void* handle) {
  struct db* d = handle;
  if (d->db != NULL) leveldb_close(d->db);
  leveldb_writeoptions_destroy(d->write);
  leveldb_readoptions_destroy(d->read);
  leveldb_options_destroy(d->options);
  free(d);
}

static int open_db(const char* path, enum kv_op op, void** handle) {
  struct db* d = calloc(1, sizeof *d);
  d->options = leveldb_options_create();
  leveldb_options_set_create_if_missing(d->options, op == KV_CREATE);
  leveldb_options_set_paranoid_checks(d->options, 0);
  leveldb_options_set_write_buffer_size(d->options, (size_t)env_number("LEVELDB_KV_BUFFER", 64 << 10));
  d->write = leveldb_writeoptions_create();
  leveldb_writeoptions_set_sync(d->write, (unsigned char)(env_number("LEVELDB_KV_SYNC", 1) != 0));
  d->read = leveldb_readoptions_create();
  leveldb_readoptions_set_verify_checksums(d->read, 1);
  char* error = NULL;
  d->db = leveldb_open(d->options, path, &error);
  if (error != NULL) {
    fprintf(stderr, "leveldb-kv: cannot open %s: %s\n", path, error);
    leveldb_free(error);
    close_db(d);
    return kExitNoDb;
  }
  *handle = d;
  return 0;
}

static int put(void* handle, const char* key, const char* value, size_t length) {
  struct db* d = handle;
  char* error = NULL;
  leveldb_put(d->db, d->write, key, 16, value, length, &error);
  if (error == NULL) return 0;
  fprintf(stderr, "leveldb-kv: %s\n", error);
  leveldb_free(error);
  return kExitInconsistent;
}

static int get(void* handle, const char* key, char** value, size_t* length) {
  struct db* d = handle;
  char* error = NULL;
  *value = leveldb_get(d->db, d->read, key, 16, length, &error);
  if (error == NULL) return *value != NULL;
  fprintf(stderr, "key %s cannot be read: %s\n", key, error);
  leveldb_free(error);
  return -1;
}

static void release(char* value) { leveldb_free(value); }

/* A scan of the whole database, its checksums verified. */
static long long count(void* handle) {
  struct db* d = handle;
  long long keys = 0;
  leveldb_iterator_t* it = leveldb_create_iterator(d->db, d->read);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) ++keys;
  char* error = NULL;
  leveldb_iter_get_error(it, &error);
  leveldb_iter_destroy(it);
  if (error == NULL) return keys;
  fprintf(stderr, "a scan of the database failed: %s\n", error);
  leveldb_free(error);
  return -1;
}

static const struct kv_strings kStrings = {kValueBytes, put, get, release, count};

static int insert(void* db, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  return kv_strings_insert(&kStrings, db, from, n, seed, traced);
}
static int judge(void* db, uint64_t n, uint64_t seed, uint64_t* present) {
  return kv_strings_judge(&kStrings, db, n, seed, present);
}

int main(int argc, char** argv) {
  const struct kv_driver leveldb = {"leveldb-kv", open_db, close_db,
                                    judge,        insert,  env_number("LEVELDB_KV_SYNC", 1) != 0};
  return kv_main(argc, argv, &leveldb);
}
