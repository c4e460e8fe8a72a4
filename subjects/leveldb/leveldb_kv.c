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
#include "pmlab/trace.h"

struct db {
  leveldb_t* db;
  leveldb_options_t* options;
  leveldb_writeoptions_t* write;
  leveldb_readoptions_t* read;
};

/* Key #i: its 16 hexadecimal digits, so that LevelDB's order is not the insert order. */
static void key_of(uint64_t i, uint64_t seed, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)kv_key(i, seed));
}

/* The value of key #i: its index and key in text, padded to 4 KiB, so that 16 fill LevelDB's smallest
 * memtable (64 KiB). */
enum { kValueBytes = 4096 };
static void value_of(uint64_t i, const char* key, char* out, size_t room) {
  const int n = snprintf(out, room, "value of #%llu, key %s, ", (unsigned long long)i, key);
  for (size_t k = (size_t)n; k + 1 < room && k + 1 < kValueBytes; ++k) out[k] = (char)('a' + (i + k) % 26);
  out[kValueBytes - 1 < room ? kValueBytes - 1 : room - 1] = '\0';
}

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

/* Inserts keys #from..#n-1 unless present, each a write of its own; `traced` marks each operation for pmlab
 * crash exec. */
static int insert(void* handle, uint64_t from, uint64_t n, uint64_t seed, int traced) {
  struct db* d = handle;
  for (uint64_t i = from; i < n; ++i) {
    if (traced) pmlab_op_begin();
    char key[17], value[kValueBytes];
    key_of(i, seed, key);
    value_of(i, key, value, sizeof value);
    char* error = NULL;
    leveldb_put(d->db, d->write, key, 16, value, strlen(value), &error);
    if (error != NULL) {
      fprintf(stderr, "leveldb-kv: insert #%llu: %s\n", (unsigned long long)i, error);
      leveldb_free(error);
      return kExitInconsistent;
    }
    if (traced) pmlab_op_end();
  }
  return 0;
}

/* Judges the database: keys #0..#m-1 are present with their values for some m <= n, and nothing else (a
 * scan of the whole database, its checksums verified, finds m keys). Sets *present to m. */
static int judge(void* handle, uint64_t n, uint64_t seed, uint64_t* present) {
  struct db* d = handle;
  uint64_t m = 0;
  int verdict = 0;
  for (; m < n && verdict == 0; ++m) {
    char key[17], want[kValueBytes];
    key_of(m, seed, key);
    value_of(m, key, want, sizeof want);
    size_t length = 0;
    char* error = NULL;
    char* value = leveldb_get(d->db, d->read, key, 16, &length, &error);
    if (error != NULL) {
      fprintf(stderr, "key #%llu cannot be read: %s\n", (unsigned long long)m, error);
      leveldb_free(error);
      verdict = kExitInconsistent;
    } else if (value == NULL) {
      break;
    } else if (length != strlen(want) || memcmp(value, want, length) != 0) {
      fprintf(stderr, "key #%llu holds another value\n", (unsigned long long)m);
      verdict = kExitInconsistent;
    }
    leveldb_free(value);
  }
  if (verdict != 0) return verdict;
  uint64_t keys = 0;
  leveldb_iterator_t* it = leveldb_create_iterator(d->db, d->read);
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) ++keys;
  char* error = NULL;
  leveldb_iter_get_error(it, &error);
  leveldb_iter_destroy(it);
  if (error != NULL) {
    fprintf(stderr, "a scan of the database failed: %s\n", error);
    leveldb_free(error);
    return kExitInconsistent;
  }
  if (keys != m) {
    fprintf(stderr, "the first %llu keys present, but a scan finds %llu\n", (unsigned long long)m,
            (unsigned long long)keys);
    return kExitInconsistent;
  }
  *present = m;
  return 0;
}

int main(int argc, char** argv) {
  const struct kv_driver leveldb = {"leveldb-kv", open_db, close_db,
                                    judge,        insert,  env_number("LEVELDB_KV_SYNC", 1) != 0};
  return kv_main(argc, argv, &leveldb);
}
