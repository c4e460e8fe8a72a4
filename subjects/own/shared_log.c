/* shared-log: one persistent log that several threads append to, for `pmlab crash exec --schedules`'s tests.
 * A user's program, as a user would write one, with a planted race.
 *
 *   shared-log append FILE N [--threads T] [--gap-us U] [--bug publish-ahead]
 *   shared-log check FILE            exit 0 consistent, 1 not (why, on stderr)
 *
 * The file (created if absent, 1 MiB, mapped with libpmem) holds a commit word and 128-byte records. A thread
 * appends by taking the next slot (an atomic counter in DRAM), writing its record there and persisting it
 * (pmem_flush, pmem_drain). It then marks the slot persisted in DRAM and, under a mutex, moves the commit
 * word over every slot in a row that is marked, and persists the word (the count in its low 40 bits, a check
 * of it in the high 24, one aligned 8-byte store). The check: the word's parts agree, and every record below
 * the count is whole.
 *
 * --bug publish-ahead: the commit word is moved to the thread's own slot + 1, over slots that other threads
 * have taken and not yet persisted. The log is then inconsistent only while another thread is between taking
 * its slot and persisting its record: with --gap-us, each thread waits that long before each append (the
 * threads a half gap apart), so the threads' appends seldom overlap when the program runs by itself. */
#define _GNU_SOURCE
#include <getopt.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_BYTES (1u << 20)
#define RECORD_BYTES 128u
#define FIRST_RECORD 4096u
#define CAPACITY ((FILE_BYTES - FIRST_RECORD) / RECORD_BYTES)
#define COMMIT_AT 64
#define MAX_THREADS 8

struct record {
  uint64_t index;
  uint64_t sum;
  uint8_t payload[RECORD_BYTES - 16];
};

static char* base;
static int publish_ahead;
static unsigned gap_us;
static int threads = 2;
static uint64_t next_slot;                /* DRAM: the next slot to take */
static unsigned char persisted[CAPACITY]; /* DRAM: slot i's record is durable */
static uint64_t committed;                /* DRAM copy of the commit word's count */
static pthread_mutex_t commit_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t check_of(uint64_t count) { return ((count * 0x9e3779b97f4a7c15ull) >> 40) & 0xffffff; }

static uint64_t sum_of(const struct record* r) {
  uint64_t s = r->index * 0x100000001b3ull;
  for (size_t k = 0; k < sizeof r->payload; ++k) s = (s ^ r->payload[k]) * 0x100000001b3ull;
  return s;
}

static struct record* record_at(uint64_t slot) { return (struct record*)(base + FIRST_RECORD + slot * RECORD_BYTES); }

static void publish(uint64_t count) {
  const uint64_t word = count | check_of(count) << 40;
  __atomic_store_n((uint64_t*)(base + COMMIT_AT), word, __ATOMIC_RELEASE);
  pmem_persist(base + COMMIT_AT, sizeof word);
}

static void append(void) {
  const uint64_t slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
  struct record r;
  r.index = slot;
  for (size_t k = 0; k < sizeof r.payload; ++k) r.payload[k] = (uint8_t)(slot * 13 + k);
  r.sum = sum_of(&r);
  memcpy(record_at(slot), &r, sizeof r);
  pmem_flush(record_at(slot), sizeof r);
  pmem_drain();
  __atomic_store_n(&persisted[slot], 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&commit_lock);
  uint64_t count = committed;
  if (publish_ahead) {
    if (slot + 1 > count) count = slot + 1;
  } else {
    while (count < CAPACITY && __atomic_load_n(&persisted[count], __ATOMIC_ACQUIRE)) ++count;
  }
  if (count != committed) {
    committed = count;
    publish(count);
  }
  pthread_mutex_unlock(&commit_lock);
}

struct worker {
  int index;
  uint64_t appends;
};

static void* run_worker(void* arg) {
  const struct worker* w = arg;
  if (gap_us) usleep(gap_us / (unsigned)threads * (unsigned)w->index + 1);
  for (uint64_t i = 0; i < w->appends; ++i) {
    if (gap_us) usleep(gap_us);
    append();
  }
  return NULL;
}

static int check(void) {
  uint64_t word;
  memcpy(&word, base + COMMIT_AT, sizeof word);
  if (word == 0) return 0;
  const uint64_t count = word & ((1ull << 40) - 1);
  if (word >> 40 != check_of(count) || count > CAPACITY) {
    fprintf(stderr, "torn or corrupt commit word 0x%016llx\n", (unsigned long long)word);
    return 1;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const struct record* r = record_at(i);
    if (r->index != i || r->sum != sum_of(r)) {
      fprintf(stderr, "record %llu of %llu committed is not whole\n", (unsigned long long)i, (unsigned long long)count);
      return 1;
    }
  }
  return 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: shared-log append FILE N [--threads T] [--gap-us U] [--bug publish-ahead]\n"
          "       shared-log check FILE\n");
  return 2;
}

int main(int argc, char** argv) {
  static const struct option options[] = {{"threads", required_argument, NULL, 't'},
                                          {"gap-us", required_argument, NULL, 'g'},
                                          {"bug", required_argument, NULL, 'b'},
                                          {NULL, 0, NULL, 0}};
  for (int c; (c = getopt_long(argc, argv, "", options, NULL)) != -1;) {
    if (c == 't') threads = atoi(optarg);
    else if (c == 'g') gap_us = (unsigned)strtoul(optarg, NULL, 10);
    else if (c == 'b' && strcmp(optarg, "publish-ahead") == 0) publish_ahead = 1;
    else return usage();
  }
  const int operands = argc - optind;
  const int appending = operands == 3 && strcmp(argv[optind], "append") == 0;
  if (!appending && !(operands == 2 && strcmp(argv[optind], "check") == 0)) return usage();
  const char* path = argv[optind + 1];
  const uint64_t n = appending ? strtoull(argv[optind + 2], NULL, 10) : 0;
  if (threads < 1 || threads > MAX_THREADS || n * (uint64_t)threads > CAPACITY) return usage();
  size_t mapped = 0;
  base = pmem_map_file(path, appending ? FILE_BYTES : 0, appending ? PMEM_FILE_CREATE : 0, 0600, &mapped, NULL);
  if (base == NULL || mapped < FILE_BYTES) {
    fprintf(stderr, "%s: %s\n", path, pmem_errormsg());
    return 3;
  }
  if (!appending) return check();
  pthread_t ids[MAX_THREADS];
  struct worker workers[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    workers[t] = (struct worker){t, n};
    if (pthread_create(&ids[t], NULL, run_worker, &workers[t]) != 0) return 4;
  }
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  pmem_unmap(base, mapped);
  return 0;
}
