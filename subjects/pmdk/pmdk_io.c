/*
 * pmdk-io: a driver and a checker for libpmemblk's atomic block writes and libpmemlog's atomic appends
 * (PMDK 1.12), a subject for `pmlab crash exec`. What is under test is PMDK's own library code, not an
 * example's.
 *
 *   pmdk-io TYPE create POOL           create the pool (blk: 512-byte blocks)
 *   pmdk-io TYPE write POOL N [SEED]   run operations #0..#N-1 (a pool that does not exist is created first)
 *   pmdk-io TYPE check POOL N [SEED]   open the pool (PMDK's recovery), judge, then use what it left
 *
 * TYPE blk: operation #i touches block i % 16. Every fifth (i % 5 == 4) zeroes it (pmemblk_set_zero); the
 *   others write record #i, 512 bytes that only #i and SEED determine (pmemblk_write). libpmemblk promises
 *   that a block write is atomic (its BTT writes a free block, then switches the block's map entry) and
 *   durable when the call returns.
 * TYPE log: operation #i appends record #i, 24 to 256 bytes (every third with pmemlog_appendv, in two
 *   pieces). libpmemlog promises that an append is atomic (the write offset moves only once the data is
 *   durable) and durable when it returns.
 *
 * What the check requires
 * -----------------------
 * Operations run one after another and each is durable when it returns, so a crash leaves exactly the state
 * after #0..#m-1 for some m: blk, every block as the last of #0..#m-1 that touched it left it (zero where
 * none did); log, records #0..#m-1 back to back and nothing after. The check finds such an m or fails
 * (a block holding no operation's whole record or another block's, a record out of sequence, a state no
 * prefix leaves). Under crash exec each operation is marked with pmlab/trace.h, and m must also cover every
 * operation that had returned before the crash ($PMLAB_CRASH_OPS_DONE) and none that had not begun
 * ($PMLAB_CRASH_OPS_BEGUN).
 * blk: pmemblk_check (PMDK's own offline check of the BTT) must then pass on the recovered pool.
 *
 * Then the check uses what recovery left: it runs #m..#N-1 as write does and requires the state after all N
 * (PMDK_SUBJECT_CHECK_USE=0 skips this). write resumes the same way: it finds m and goes on from there, so it
 * also completes a pool a crash interrupted. Every operation #0..#N-1 is marked, those a resumed pool held
 * already too, so the marks count operations from #0.
 *
 *   pmdk-io TYPE damage POOL N WHAT [SEED]   after `write N`, damage the pool the way WHAT says, through
 *                                            PMDK's own calls (the structure stays valid; the content lies):
 *     blk torn:  the last block written holds half its record and half another's
 *     blk stale: the last block written holds that block's previous record again
 *     log torn:  one more record #N is appended with one byte changed
 *
 * Exit codes as every subject's (subject_common.h): 0 consistent, 1 inconsistent (one line on stderr), 2
 * usage, 3 the pool cannot be created or opened.
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <libpmemblk.h>
#include <libpmemlog.h>

#include "pmlab/trace.h"
#include "subject_common.h"

#define BLOCK_BYTES 512
#define BLOCK_WORDS (BLOCK_BYTES / 8)
#define BLOCKS_USED 16 /* blocks the operations rotate over */
#define LOG_MAX_WORDS 32
#define RECORD_MAGIC 0x4f49444d50ULL /* "PMDIO" */

static char label[256];

#define FAIL(...) subject_fail(SUBJECT_INCONSISTENT, label, __VA_ARGS__)

/* Word w of the record of operation #i under SEED; words 0-2 say whose record it is. */
static uint64_t record_word(uint64_t i, uint64_t seed, size_t w, size_t words) {
  switch (w) {
    case 0: return RECORD_MAGIC;
    case 1: return i;
    case 2: return (uint64_t)words;
    default: return subject_mix64(i ^ subject_mix64(seed * 0x100000001b3ULL + w));
  }
}

static void record_of(uint64_t i, uint64_t seed, uint64_t* words, size_t n) {
  for (size_t w = 0; w < n; ++w) words[w] = record_word(i, seed, w, n);
}

static uint64_t operations_begun(uint64_t n) {
  const char* text = getenv("PMLAB_CRASH_OPS_BEGUN");
  uint64_t begun;
  if (!text || subject_parse_u64(text, &begun) || begun > n) return n;
  return begun;
}

/* The pool holds the state after m operations: no fewer than had returned, no more than had begun. */
static void require_marked(uint64_t m, uint64_t begun) {
  const uint64_t returned = subject_returned_inserts();
  if (m > begun)
    FAIL("the pool holds the state after %" PRIu64 " operations, but only %" PRIu64 " had begun", m, begun);
  if (m < returned)
    FAIL("the pool holds the state after %" PRIu64 " operations, but %" PRIu64 " had returned", m, returned);
}

/* --- blk ---------------------------------------------------------------------------------------------- */

static int blk_zeroes(uint64_t i) { return i % 5 == 4; }

/* What block `b` holds after operations #0..#m-1: the operation whose record it is, or -1 for zeros. */
static int64_t blk_expected(uint64_t b, uint64_t m) {
  if (m <= b) return -1;
  const uint64_t last = b + (m - 1 - b) / BLOCKS_USED * BLOCKS_USED;
  return blk_zeroes(last) ? -1 : (int64_t)last;
}

static void* blk_open(const char* path, int create) {
  PMEMblkpool* pbp =
      create ? pmemblk_create(path, BLOCK_BYTES, subject_pool_size(label, "PMDK_IO_POOL_SIZE", PMEMBLK_MIN_POOL), 0600)
             : pmemblk_open(path, BLOCK_BYTES);
  if (!pbp)
    subject_fail(SUBJECT_NO_POOL, label, "cannot %s %s: %s", create ? "create" : "open", path, pmemblk_errormsg());
  if (pmemblk_nblock(pbp) < 2 * BLOCKS_USED)
    subject_fail(SUBJECT_NO_POOL, label, "%s holds %zu blocks, %d needed", path, pmemblk_nblock(pbp), 2 * BLOCKS_USED);
  return pbp;
}

static void blk_close(void* pool) { pmemblk_close(pool); }

/*
 * What each of the first BLOCKS_USED blocks holds: the operation whose whole record it is, or -1 for zeros;
 * a block that holds neither fails the check, as does a nonzero block beyond them.
 */
static void blk_read(PMEMblkpool* pbp, uint64_t n, uint64_t seed, int64_t held[BLOCKS_USED]) {
  uint64_t got[BLOCK_WORDS], want[BLOCK_WORDS];
  for (uint64_t b = 0; b < 2 * BLOCKS_USED; ++b) {
    if (pmemblk_read(pbp, got, (long long)b) != 0) FAIL("pmemblk_read of block %" PRIu64 ": %s", b, pmemblk_errormsg());
    int zero = 1;
    for (size_t w = 0; w < BLOCK_WORDS && zero; ++w) zero = got[w] == 0;
    if (b >= BLOCKS_USED) {
      if (!zero) FAIL("block %" PRIu64 " is not zero, though no operation writes it", b);
      continue;
    }
    held[b] = -1;
    if (zero) continue;
    const uint64_t i = got[1];
    if (i < n && !blk_zeroes(i)) {
      record_of(i, seed, want, BLOCK_WORDS);
      if (memcmp(got, want, sizeof(want)) == 0) {
        if (i % BLOCKS_USED != b)
          FAIL("block %" PRIu64 " holds the record operation #%" PRIu64 " wrote to block %" PRIu64, b, i,
               i % BLOCKS_USED);
        held[b] = (int64_t)i;
        continue;
      }
    }
    FAIL("block %" PRIu64 " holds no operation's whole record (torn, or written with another seed)", b);
  }
}

/* The largest m in [from, to] whose state the blocks hold; -1 when none does. */
static int64_t blk_prefix(const int64_t held[BLOCKS_USED], uint64_t from, uint64_t to) {
  for (uint64_t m = to + 1; m-- > from;) {
    uint64_t b = 0;
    while (b < BLOCKS_USED && blk_expected(b, m) == held[b]) ++b;
    if (b == BLOCKS_USED) return (int64_t)m;
  }
  return -1;
}

static uint64_t blk_state(void* pool, uint64_t n, uint64_t seed, uint64_t begun) {
  int64_t held[BLOCKS_USED];
  blk_read(pool, n, seed, held);
  int64_t m = blk_prefix(held, 0, begun);
  if (m < 0 && begun < n) m = blk_prefix(held, begun + 1, n);
  if (m < 0) FAIL("the pool holds the state after no prefix of the %" PRIu64 " operations", n);
  return (uint64_t)m;
}

static void blk_run(void* pool, uint64_t from, uint64_t n, uint64_t seed, int marked) {
  uint64_t words[BLOCK_WORDS];
  for (uint64_t i = 0; i < n; ++i) {
    if (marked) pmlab_op_begin();
    if (i >= from) {
      const long long b = (long long)(i % BLOCKS_USED);
      int rc;
      if (blk_zeroes(i)) {
        rc = pmemblk_set_zero(pool, b);
      } else {
        record_of(i, seed, words, BLOCK_WORDS);
        rc = pmemblk_write(pool, words, b);
      }
      if (rc != 0) FAIL("operation #%" PRIu64 " on block %lld failed: %s", i, b, pmemblk_errormsg());
    }
    if (marked) pmlab_op_end();
  }
}

static void blk_check_closed(const char* path) {
  const int checked = pmemblk_check(path, BLOCK_BYTES);
  if (checked != 1)
    FAIL("pmemblk_check finds the recovered pool %s", checked == 0 ? "inconsistent" : pmemblk_errormsg());
}

static void blk_damage(void* pool, uint64_t n, uint64_t seed, const char* what) {
  uint64_t last = n - 1;
  while (blk_zeroes(last)) --last;
  uint64_t words[BLOCK_WORDS], other[BLOCK_WORDS];
  record_of(last, seed, words, BLOCK_WORDS);
  if (strcmp(what, "torn") == 0) {
    record_of(last - BLOCKS_USED, seed, other, BLOCK_WORDS);
    memcpy(words + BLOCK_WORDS / 2, other + BLOCK_WORDS / 2, BLOCK_BYTES / 2);
  } else {
    uint64_t previous = last - BLOCKS_USED;
    while (blk_zeroes(previous) && previous >= BLOCKS_USED) previous -= BLOCKS_USED;
    record_of(previous, seed, words, BLOCK_WORDS);
  }
  if (pmemblk_write(pool, words, (long long)(last % BLOCKS_USED)) != 0) FAIL("pmemblk_write: %s", pmemblk_errormsg());
}

/* --- log ---------------------------------------------------------------------------------------------- */

static size_t log_words(uint64_t i, uint64_t seed) {
  return 3 + (size_t)(subject_mix64(i ^ subject_mix64(seed + 0x1095)) % (LOG_MAX_WORDS - 2));
}

static void* log_open(const char* path, int create) {
  PMEMlogpool* plp = create
                         ? pmemlog_create(path, subject_pool_size(label, "PMDK_IO_POOL_SIZE", PMEMLOG_MIN_POOL), 0600)
                         : pmemlog_open(path);
  if (!plp)
    subject_fail(SUBJECT_NO_POOL, label, "cannot %s %s: %s", create ? "create" : "open", path, pmemlog_errormsg());
  return plp;
}

static void log_close(void* pool) { pmemlog_close(pool); }

struct log_walk {
  uint64_t n, seed;
  uint64_t records; /* whole records #0..#records-1 found */
  char why[160];    /* empty: the log is records #0..#records-1 and nothing else */
};

static int log_parse(const void* buf, size_t len, void* arg) {
  struct log_walk* walk = arg;
  const unsigned char* bytes = buf;
  uint64_t want[LOG_MAX_WORDS];
  size_t at = 0;
  for (walk->records = 0; at < len; ++walk->records) {
    const uint64_t i = walk->records;
    if (i >= walk->n) {
      snprintf(walk->why, sizeof(walk->why), "bytes follow record #%" PRIu64 ", the last operation's", i - 1);
      return 0;
    }
    const size_t words = log_words(i, walk->seed);
    record_of(i, walk->seed, want, words);
    if (len - at < words * 8 || memcmp(bytes + at, want, words * 8) != 0) {
      snprintf(walk->why, sizeof(walk->why), "the bytes at offset %zu of %zu are not record #%" PRIu64, at, len, i);
      return 0;
    }
    at += words * 8;
  }
  return 0;
}

/* The log's records are #0..#m-1 and nothing else: m, the one state it can hold. */
static uint64_t log_state(void* pool, uint64_t n, uint64_t seed, uint64_t begun) {
  (void)begun;
  struct log_walk walk = {.n = n, .seed = seed, .records = 0, .why = ""};
  pmemlog_walk(pool, 0, log_parse, &walk);
  if (walk.why[0]) FAIL("%s", walk.why);
  return walk.records;
}

static void log_run(void* pool, uint64_t from, uint64_t n, uint64_t seed, int marked) {
  uint64_t words[LOG_MAX_WORDS];
  for (uint64_t i = 0; i < n; ++i) {
    if (marked) pmlab_op_begin();
    if (i >= from) {
      const size_t count = log_words(i, seed);
      record_of(i, seed, words, count);
      int rc;
      if (i % 3 == 2) {
        struct iovec pieces[2] = {{words, count / 2 * 8}, {words + count / 2, (count - count / 2) * 8}};
        rc = pmemlog_appendv(pool, pieces, 2);
      } else {
        rc = pmemlog_append(pool, words, count * 8);
      }
      if (rc != 0) FAIL("appending record #%" PRIu64 " failed: %s", i, pmemlog_errormsg());
    }
    if (marked) pmlab_op_end();
  }
}

static void log_damage(void* pool, uint64_t n, uint64_t seed, const char* what) {
  (void)what;
  uint64_t words[LOG_MAX_WORDS];
  const size_t count = log_words(n, seed);
  record_of(n, seed, words, count);
  words[count - 1] ^= 1;
  if (pmemlog_append(pool, words, count * 8) != 0) FAIL("pmemlog_append: %s", pmemlog_errormsg());
}

/* --- the commands, over either library ------------------------------------------------------------------ */

struct io_type {
  const char* name;
  const char* opening;    /* what opening runs, for the checker's guard */
  const char* reading;    /* how the state is read */
  const char* damages[3]; /* the damage it takes, by name (null-terminated) */
  size_t damage_min_n;    /* the operations a damage needs behind it */
  void* (*open)(const char* path, int create);
  void (*close)(void* pool);
  /* Operations #from..#n-1; with `marked`, #0..#from-1 are marked too, done already. */
  void (*run)(void* pool, uint64_t from, uint64_t n, uint64_t seed, int marked);
  /* The m whose state the pool holds, the largest no greater than `begun` where several are alike; fails
   * when the pool holds content no operation wrote, or no prefix's state. */
  uint64_t (*state)(void* pool, uint64_t n, uint64_t seed, uint64_t begun);
  void (*check_closed)(const char* path); /* a check of the closed, recovered pool; may be null */
  void (*damage)(void* pool, uint64_t n, uint64_t seed, const char* what);
};

static const struct io_type kTypes[] = {
    {"blk",
     "opening the pool (pmemblk_open, the BTT's recovery)",
     "reading the blocks",
     {"torn", "stale", NULL},
     2 * BLOCKS_USED,
     blk_open,
     blk_close,
     blk_run,
     blk_state,
     blk_check_closed,
     blk_damage},
    {"log",
     "opening the pool (pmemlog_open)",
     "walking the log (pmemlog_walk)",
     {"torn", NULL},
     1,
     log_open,
     log_close,
     log_run,
     log_state,
     NULL,
     log_damage},
};

static int cmd_write(const struct io_type* t, const char* path, uint64_t n, uint64_t seed) {
  void* pool = t->open(path, !subject_file_exists(path));
  const uint64_t m = t->state(pool, n, seed, n);
  subject_arm_kill_timer();
  t->run(pool, m, n, seed, 1);
  t->close(pool);
  return SUBJECT_OK;
}

static int cmd_check(const struct io_type* t, const char* path, uint64_t n, uint64_t seed) {
  subject_guard_install(label);
  subject_guard_phase(t->opening, 1);
  void* pool = t->open(path, 0);
  subject_guard_phase(t->reading, 0);
  const uint64_t begun = operations_begun(n);
  const uint64_t m = t->state(pool, n, seed, begun);
  require_marked(m, begun);
  if (t->check_closed) {
    t->close(pool);
    subject_guard_phase("checking the recovered pool with the library's own check", 0);
    t->check_closed(path);
    pool = t->open(path, 0);
  }
  if (m < n && !subject_env_is_off("PMDK_SUBJECT_CHECK_USE")) {
    snprintf(label + strlen(label), sizeof(label) - strlen(label),
             ", after running #%" PRIu64 "..#%" PRIu64 " on the recovered pool", m, n - 1);
    subject_guard_phase("running the remaining operations on the recovered pool", 0);
    t->run(pool, m, n, seed, 0);
    const uint64_t all = t->state(pool, n, seed, n);
    if (all != n) FAIL("the pool holds the state after %" PRIu64 " operations, not all %" PRIu64, all, n);
  }
  t->close(pool);
  printf("%s: consistent: the state after %" PRIu64 " of %" PRIu64 " operations\n", label, m, n);
  return SUBJECT_OK;
}

static int cmd_damage(const struct io_type* t, const char* path, uint64_t n, uint64_t seed, const char* what) {
  size_t d = 0;
  while (t->damages[d] && strcmp(t->damages[d], what) != 0) ++d;
  if (!t->damages[d])
    subject_fail(SUBJECT_USAGE, label, "unknown damage '%s' (%s%s%s)", what, t->damages[0], t->damages[1] ? ", " : "",
                 t->damages[1] ? t->damages[1] : "");
  if (n < t->damage_min_n) subject_fail(SUBJECT_USAGE, label, "damage needs N >= %zu", t->damage_min_n);
  void* pool = t->open(path, 0);
  t->damage(pool, n, seed, what);
  t->close(pool);
  return SUBJECT_OK;
}

/* --- command line ------------------------------------------------------------------------------------- */

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s TYPE create POOL\n"
          "       %s TYPE write POOL N [SEED]\n"
          "       %s TYPE check POOL N [SEED]\n"
          "       %s TYPE damage POOL N WHAT [SEED]\n"
          "TYPE: blk (libpmemblk) or log (libpmemlog)\n",
          prog, prog, prog, prog);
  exit(SUBJECT_USAGE);
}

int main(int argc, char* argv[]) {
  const char* base = subject_program_name(argc, argv, "pmdk-io");
  if (argc < 4) usage(base);
  const char* cmd = argv[2];
  const char* path = argv[3];
  const struct io_type* t = NULL;
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]) && !t; ++i)
    if (strcmp(argv[1], kTypes[i].name) == 0) t = &kTypes[i];
  if (!t) {
    fprintf(stderr, "%s: unknown type '%s' (blk, log)\n", base, argv[1]);
    return SUBJECT_USAGE;
  }
  snprintf(label, sizeof(label), "%s %s %s", base, t->name, cmd);

  if (strcmp(cmd, "create") == 0) {
    if (argc != 4) usage(base);
    t->close(t->open(path, 1));
    return SUBJECT_OK;
  }
  const int damage = strcmp(cmd, "damage") == 0;
  if (!damage && strcmp(cmd, "write") != 0 && strcmp(cmd, "check") != 0) usage(base);
  const int seed_at = damage ? 6 : 5;
  uint64_t n, seed = 1;
  if (argc < seed_at || argc > seed_at + 1 || subject_parse_u64(argv[4], &n) || n >= (1ULL << 40) ||
      (argc == seed_at + 1 && subject_parse_u64(argv[seed_at], &seed)))
    usage(base);
  if (damage) return cmd_damage(t, path, n, seed, argv[5]);
  return strcmp(cmd, "write") == 0 ? cmd_write(t, path, n, seed) : cmd_check(t, path, n, seed);
}
