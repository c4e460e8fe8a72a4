/*
 * What the PMDK subjects' drivers and checkers share: the key sequence, the value records, the command
 * line's numbers, and the guard that turns a checker's crash on a damaged pool into a one-line verdict.
 */
#ifndef PMLAB_SUBJECT_COMMON_H
#define PMLAB_SUBJECT_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of every subject command. */
enum {
  SUBJECT_OK = 0,           /* done; for check: consistent */
  SUBJECT_INCONSISTENT = 1, /* check: the image breaks a guarantee; create/insert: an operation failed */
  SUBJECT_USAGE = 2,
  SUBJECT_NO_POOL = 3, /* the pool cannot be created or opened */
};

/* splitmix64's finaliser: a bijection on 64-bit words that maps only 0 to 0. */
static inline uint64_t subject_mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xbf58476d1ce4e5b9ULL;
  z ^= z >> 27;
  z *= 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return z;
}

/*
 * Key #i of the sequence of SEED. The salt has its top bit set, so i ^ salt is never 0 for i < 2^63:
 * every key is nonzero (btree_map and ctree_map take key 0 for an empty slot), distinct (a bijection of
 * i), and the sequence is in no particular order.
 */
static inline uint64_t subject_key(uint64_t i, uint64_t seed) {
  uint64_t salt = subject_mix64(seed + 0x9e3779b97f4a7c15ULL) | (1ULL << 63);
  return subject_mix64(i ^ salt);
}

/* What a value record's checksum covers: its key and its index in the sequence. */
static inline uint64_t subject_value_check(uint64_t key, uint64_t index) {
  return subject_mix64(key ^ subject_mix64(index + 0x5ab1ec7ULL));
}

/* Key #i -> i, for the keys a checker meets while iterating. */
struct subject_keys {
  uint64_t n;
  uint64_t seed;
  uint64_t* key; /* key[i]: key #i */
  struct subject_key_index {
    uint64_t key;
    uint64_t index;
  } * sorted; /* (key, i), sorted by key */
};

int subject_keys_init(struct subject_keys* keys, uint64_t n, uint64_t seed);
void subject_keys_free(struct subject_keys* keys);
/* The index of `key` in the sequence, or -1 when it is not one of its n keys. */
int64_t subject_keys_find(const struct subject_keys* keys, uint64_t key);

/* The allocated objects of a pool (offset and type number), sorted by offset. */
struct subject_objects {
  struct subject_object {
    uint64_t off;
    uint64_t type;
  } * obj;
  size_t count;
  size_t capacity;
};

struct pmemobjpool;
/* Every allocated object of `pop` (POBJ_FOREACH); -1 when out of memory. */
int subject_objects_collect(struct pmemobjpool* pop, struct subject_objects* set);
/* The type number of the allocated object at `off`, or -1 when no allocated object starts there. */
int64_t subject_objects_type(const struct subject_objects* set, uint64_t off);
size_t subject_objects_count_type(const struct subject_objects* set, uint64_t type);
void subject_objects_free(struct subject_objects* set);

/* The name the program was run by, without its directory (`fallback` when argv has none). */
const char* subject_program_name(int argc, char* argv[], const char* fallback);
/* Command-line numbers: a decimal or 0x count/seed; a size with an optional K, M or G suffix (binary). */
int subject_parse_u64(const char* text, uint64_t* out);
int subject_parse_size(const char* text, size_t* out);
/* The pool size from environment variable `var`, or `min` (the library's smallest pool); exits 2 on a bad
 * value or one below `min`. */
size_t subject_pool_size(const char* prog, const char* var, size_t min);
int subject_file_exists(const char* path);
/* 1 when `path` is a PMDK poolset file (its first line PMEMPOOLSET): a pool of its parts, created with size 0. */
int subject_is_poolset(const char* path);
/* 1 when environment variable `var` is set to 0: a switch that is on by default. */
int subject_env_is_off(const char* var);
/* How many inserts had returned before the crash this image is of ($PMLAB_CRASH_OPS_DONE: the driver marks
 * each insert with pmlab/trace.h's pmlab_op_begin / pmlab_op_end); 0 outside crash exec, or with
 * PMDK_SUBJECT_CHECK_RETURNED=0 (the check then asks only for a prefix). */
uint64_t subject_returned_inserts(void);

/*
 * Crash emulation for native smoke tests: when PMDK_SUBJECT_KILL_AFTER_US is set, the process kills itself
 * with SIGALRM that many microseconds after this call. On a pool in /dev/shm (PMEM_IS_PMEM_FORCE=1) every
 * store it executed stays in the file: the image of a process crash, which PMDK's guarantees also cover.
 */
void subject_arm_kill_timer(void);

/*
 * The checker's guard: a fatal signal (a dangling or torn pointer, a zero divisor, an abort in the
 * example's code, a cycle that never ends) becomes one line on stderr naming what the checker was doing,
 * and exit 1 (exit 3 while the pool is being opened). The time limit is PMDK_SUBJECT_CHECK_TIMEOUT seconds
 * (default 60, 0: none).
 */
void subject_guard_install(const char* label);
/* What the checker does now, for the guard's message; `opening`: a crash now means exit 3. */
void subject_guard_phase(const char* phase, int opening);

/* Print "LABEL: MESSAGE" as one line on stderr and exit with `code`. */
void subject_fail(int code, const char* label, const char* fmt, ...) __attribute__((format(printf, 3, 4), noreturn));

#endif /* PMLAB_SUBJECT_COMMON_H */
