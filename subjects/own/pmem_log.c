/* pmem-log: a small persistent log written through each route a program can persist by, with planted bugs,
 * for `pmlab crash exec`'s own tests. Not PMDK's code and not pmlab's: a user's program, as a user would
 * write one.
 *
 *   pmem-log append FILE N [--api ROUTE] [--bug NAME] [--threads T]
 *   pmem-log check FILE [--threads T] [--bug torn-commit] [--require returned|prefix]
 *                                                           exit 0 consistent, 1 not (why, on stderr)
 *
 * The file (created if absent, 1 MiB) holds one log per thread. A log is a commit word and 128-byte records:
 * append i writes record i, persists it, then stores the commit word (the count i+1 in its low 40 bits, a
 * check of the count in its high 24, one aligned 8-byte store) and persists that. Each append is an
 * operation marked with pmlab_op_begin / pmlab_op_end. The check: the word's two parts agree, every record
 * below the count is whole, and (--require returned, the default) the logs hold at least as many records
 * as appends had returned before the crash ($PMLAB_CRASH_OPS_DONE); --require prefix drops that last part.
 *
 * Routes (--api): libpmem (pmem_map_file, pmem_flush / pmem_drain / pmem_memcpy_nodrain), pmem2 (libpmem2's
 * flush / drain functions of the map), asm (the program maps the file itself and persists with its own
 * inline clwb / sfence macros, each told to pmlab through pmlab/trace.h: pass --pool), asm-unreported (the
 * same macros without the calls, as a program that never heard of pmlab: crash exec traps the instructions,
 * or with --own-instructions reported sees no write-back and no fence, and its run names where they are),
 * nt-unreported (records and commit words stored with non-temporal stores, movntdq and movnti, and ordered by
 * sfence alone: nothing is written back; no pmlab/trace.h call), plugin (clwb and sfence in a library the
 * program loads with dlopen after its start, pmem_log_plugin.c: a storage engine's flush backend as a
 * plugin, or a Python extension's; no pmlab/trace.h call). With write(2), the program keeping the log in its own
 * memory (pass --pool): write (a write-back is a pwrite of the range to the file, a fence an fdatasync), write-dsync
 * (the same pwrite on a descriptor opened O_DSYNC, durable when it returns: no fence needed). Through the
 * kernel, the program mapping the file itself
 * (pass --pool): msync (the pages of what it persists), fsync, fdatasync, syncfs, sync (the whole file, its
 * file system, every file); and two that promise no durability, so these routes lose appends whatever the
 * bug: msync-async (MS_ASYNC, which Linux does nothing for), sync-file-range (the pages,
 * SYNC_FILE_RANGE_WRITE and both waits: a write-back).
 *
 * Bugs (--bug): no-flush (the record is never written back), no-fence (no fence between the record's
 * write-back and the commit), commit-first (the commit is stored before the record), torn-commit (the commit
 * word 4 bytes off its alignment: it straddles two 8-byte words, which persist independently; give the
 * check the same --bug to read it there),
 * short-persist (only the record's first line is written back), cross-fence (with 2 threads: the fence
 * after a thread's record is issued by the other thread, which orders nothing of this one's), unfenced-commit
 * (the commit word is written back but its fence is left to the next append: an append returns before its
 * commit is durable, and the log is still a consistent prefix; only --require returned sees it).
 *
 * Shapes a program may have beside its persistence (each a way a tracer could break it):
 *   --records-by read      records reach the log through a pipe: read() stores them, a store the kernel makes
 *   --signals blocked      every thread that appends blocks every signal first, as servers' workers do
 *   --own-sigtrap yes      before appending, the program raises a SIGTRAP of its own (a debugger's breakpoint)
 *                          and catches it with its own handler, and sigaction shows that handler
 *   --own-sigbus yes       before appending, the program catches a SIGBUS of its own (a store past the end
 *                          of a file it mapped) with its own handler, and sigaction shows that handler
 *   --then COMMAND         after its appends the program runs COMMAND (system(3)), another process of its own */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <libpmem2.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <emmintrin.h>

#include "pmlab/trace.h"

#define FILE_BYTES (1u << 20)
#define LOG_BYTES (FILE_BYTES / 4)
#define RECORD_BYTES 128u
#define FIRST_RECORD 4096u
#define CAPACITY ((LOG_BYTES - FIRST_RECORD) / RECORD_BYTES)
#define MAX_THREADS 4

#define COMMIT_AT 64
static uint64_t check_of(uint64_t count) { return ((count * 0x9e3779b97f4a7c15ull) >> 40) & 0xffffff; }

struct record {
  uint64_t index;
  uint64_t sum;
  uint8_t payload[RECORD_BYTES - 16];
};

enum api {
  API_LIBPMEM,
  API_PMEM2,
  API_ASM,
  API_ASM_UNREPORTED,
  API_NT_UNREPORTED,
  API_PLUGIN,
  API_WRITE,
  API_WRITE_DSYNC,
  /* through the kernel: */
  API_MSYNC,
  API_MSYNC_ASYNC,
  API_FSYNC,
  API_FDATASYNC,
  API_SYNCFS,
  API_SYNC,
  API_SYNC_FILE_RANGE
};
static const char* api_names[] = {"libpmem", "pmem2",     "asm",         "asm-unreported", "nt-unreported",
                                  "plugin",  "write",     "write-dsync", "msync",          "msync-async",
                                  "fsync",   "fdatasync", "syncfs",      "sync",           "sync-file-range"};
enum bug {
  BUG_NONE,
  BUG_NO_FLUSH,
  BUG_NO_FENCE,
  BUG_COMMIT_FIRST,
  BUG_TORN_COMMIT,
  BUG_SHORT_PERSIST,
  BUG_CROSS_FENCE,
  BUG_UNFENCED_COMMIT
};

static enum api api = API_LIBPMEM;
static enum bug bug = BUG_NONE;
static char* base;
static int file_fd = -1; /* the kernel's routes sync through it; the write routes write through it */
static pmem2_flush_fn pmem2_flush;
static pmem2_drain_fn pmem2_drain;
static int has_clwb;
/* --api plugin: the primitives of libpmem-log-plugin.so, loaded with dlopen by its path (or, with --plugin-by
 * name, by its name alone, found through the program's RUNPATH). */
static void (*plugin_flush)(const void*, size_t);
static void (*plugin_fence)(void);
static int plugin_by_name;

/* --- the program's own persistence primitives, one set per route ------------------------------------- */

#define RAW_CLWB(p)                                                         \
  do {                                                                      \
    if (has_clwb) __asm__ volatile("clwb %0" : "+m"(*(volatile char*)(p))); \
    else __asm__ volatile("clflush %0" : "+m"(*(volatile char*)(p)));       \
  } while (0)
/* The fence through the compiler's intrinsic, as many programs write it: its code comes from a system header,
 * and crash exec must still name the program's function it was inlined into. */
#define RAW_SFENCE() _mm_sfence()
#define MY_CLWB(p)        \
  do {                    \
    RAW_CLWB(p);          \
    pmlab_flush((p), 64); \
  } while (0)
#define MY_SFENCE() \
  do {              \
    pmlab_fence();  \
    RAW_SFENCE();   \
  } while (0)

static void flush(const void* p, size_t n) {
  switch (api) {
    case API_LIBPMEM: pmem_flush(p, n); break;
    case API_PMEM2: pmem2_flush(p, n); break;
    case API_ASM:
      for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)p + n; a += 64) MY_CLWB((void*)a);
      break;
    case API_ASM_UNREPORTED:
      for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)p + n; a += 64) RAW_CLWB((void*)a);
      break;
    case API_NT_UNREPORTED: break; /* its stores bypass the cache: nothing to write back */
    case API_PLUGIN: plugin_flush(p, n); break;
    case API_WRITE:
    case API_WRITE_DSYNC:
      if (pwrite(file_fd, p, n, (off_t)((const char*)p - base)) != (ssize_t)n) perror("pwrite");
      break;
    default: break; /* the kernel's routes write back and fence at once: see persist() */
  }
}

static void fence(void) {
  switch (api) {
    case API_LIBPMEM: pmem_drain(); break;
    case API_PMEM2: pmem2_drain(); break;
    case API_ASM: MY_SFENCE(); break;
    case API_ASM_UNREPORTED:
    case API_NT_UNREPORTED: RAW_SFENCE(); break;
    case API_PLUGIN: plugin_fence(); break;
    case API_WRITE:
      if (fdatasync(file_fd) != 0) perror("fdatasync");
      break;
    default: break;
  }
}

/* Write back [p, p+n) and fence. The kernel's unit is the page, or the file. */
static void persist(const void* p, size_t n) {
  const uintptr_t from = (uintptr_t)p & ~(uintptr_t)4095;
  const size_t pages = (uintptr_t)p + n - from;
  int rc = 0;
  switch (api) {
    case API_MSYNC: rc = msync((void*)from, pages, MS_SYNC); break;
    case API_MSYNC_ASYNC: rc = msync((void*)from, pages, MS_ASYNC); break;
    case API_FSYNC: rc = fsync(file_fd); break;
    case API_FDATASYNC: rc = fdatasync(file_fd); break;
    case API_SYNCFS: rc = syncfs(file_fd); break;
    case API_SYNC: sync(); break;
    case API_SYNC_FILE_RANGE:
      rc = sync_file_range(file_fd, (off_t)(from - (uintptr_t)base), (off_t)pages,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      break;
    default:
      flush(p, n);
      fence();
      return;
  }
  if (rc != 0) perror(api_names[api]);
}

/* --- the log --------------------------------------------------------------------------------------- */

static uint64_t sum_of(const struct record* r) {
  uint64_t s = r->index * 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof r->payload; ++i) s = (s ^ r->payload[i]) * 0x100000001b3ull;
  return s;
}

static char* commit_of(int log) {
  return base + (size_t)log * LOG_BYTES + COMMIT_AT + (bug == BUG_TORN_COMMIT ? 4 : 0);
}
static struct record* record_of(int log, uint64_t i) {
  return (struct record*)(base + (size_t)log * LOG_BYTES + FIRST_RECORD + i * RECORD_BYTES);
}

static int records_by_read, block_signals, own_sigbus, own_sigtrap, require_returned = 1;
static int record_pipe[MAX_THREADS][2];

static void write_record(int log, uint64_t i) {
  struct record r;
  r.index = i;
  for (size_t k = 0; k < sizeof r.payload; ++k) r.payload[k] = (uint8_t)(i * 31 + k + (uint64_t)log * 7);
  r.sum = sum_of(&r);
  if (api == API_NT_UNREPORTED && bug != BUG_NO_FLUSH) {
    /* Non-temporal stores, 16 bytes each (short-persist: the first line only; the rest stored plainly). */
    const size_t streamed = bug == BUG_SHORT_PERSIST ? 64 : sizeof r;
    __m128i* to = (__m128i*)record_of(log, i);
    for (size_t k = 0; k < streamed / 16; ++k) _mm_stream_si128(to + k, _mm_loadu_si128((const __m128i*)&r + k));
    memcpy((char*)to + streamed, (const char*)&r + streamed, sizeof r - streamed);
    return;
  }
  if (!records_by_read) {
    memcpy(record_of(log, i), &r, sizeof r);
    return;
  }
  if (write(record_pipe[log][1], &r, sizeof r) != (ssize_t)sizeof r ||
      read(record_pipe[log][0], record_of(log, i), sizeof r) != (ssize_t)sizeof r) {
    perror("a record through its pipe");
    exit(4);
  }
}

static void store_commit(int log, uint64_t count) {
  const uint64_t word = count | check_of(count) << 40;
  if (bug == BUG_TORN_COMMIT) memcpy(commit_of(log), &word, sizeof word); /* two 8-byte words' halves */
  else if (api == API_NT_UNREPORTED) _mm_stream_si64((long long*)commit_of(log), (long long)word);
  else __atomic_store_n((uint64_t*)commit_of(log), word, __ATOMIC_RELEASE);
  if (bug == BUG_UNFENCED_COMMIT && api < API_MSYNC) flush(commit_of(log), sizeof word);
  else persist(commit_of(log), sizeof word);
}

static pthread_barrier_t step;
static int threads = 1;

static void append(int log, uint64_t i) {
  if (bug == BUG_COMMIT_FIRST) store_commit(log, i + 1);
  write_record(log, i);
  if (bug != BUG_NO_FLUSH) flush(record_of(log, i), bug == BUG_SHORT_PERSIST ? 64 : RECORD_BYTES);
  if (api >= API_MSYNC && bug != BUG_NO_FLUSH) persist(record_of(log, i), RECORD_BYTES);
  if (bug == BUG_CROSS_FENCE) {
    /* Thread 1 fences "for both" once both have written back: its fence orders nothing of thread 0's. */
    pthread_barrier_wait(&step);
    if (log == 1) fence();
    pthread_barrier_wait(&step);
  } else if (bug != BUG_NO_FENCE) {
    fence();
  }
  if (bug != BUG_COMMIT_FIRST) store_commit(log, i + 1);
}

struct worker {
  int log;
  uint64_t n;
};

static void* run_worker(void* arg) {
  const struct worker* w = arg;
  if (block_signals) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
  }
  for (uint64_t i = 0; i < w->n; ++i) {
    pmlab_op_begin();
    append(w->log, i);
    pmlab_op_end();
  }
  return NULL;
}

/* 0 when log `log` is consistent, its committed records then added to *records. */
static int check_log(int log, uint64_t* records) {
  uint64_t word;
  memcpy(&word, commit_of(log), sizeof word);
  const uint64_t count = word & ((1ull << 40) - 1);
  if (word == 0) return 0; /* never committed */
  if (word >> 40 != check_of(count)) {
    fprintf(stderr, "log %d: torn commit word 0x%016llx (count %llu, check 0x%06llx, expected 0x%06llx)\n", log,
            (unsigned long long)word, (unsigned long long)count, (unsigned long long)(word >> 40),
            (unsigned long long)check_of(count));
    return 1;
  }
  if (count > CAPACITY) {
    fprintf(stderr, "log %d: count %llu beyond the log's %u records\n", log, (unsigned long long)count, CAPACITY);
    return 1;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const struct record* r = record_of(log, i);
    if (r->index != i || r->sum != sum_of(r)) {
      fprintf(stderr, "log %d: record %llu of %llu committed is not whole\n", log, (unsigned long long)i,
              (unsigned long long)count);
      return 1;
    }
  }
  *records += count;
  return 0;
}

/* Sets the program's own handler for `sig`: 0 when sigaction then shows it. */
static int own_handler(int sig, void (*handler)(int)) {
  struct sigaction mine, shown;
  memset(&mine, 0, sizeof mine);
  mine.sa_handler = handler;
  sigemptyset(&mine.sa_mask);
  if (sigaction(sig, &mine, NULL) == 0 && sigaction(sig, NULL, &shown) == 0 && shown.sa_handler == handler) return 0;
  fprintf(stderr, "sigaction does not show the program's %s handler\n", sig == SIGBUS ? "SIGBUS" : "SIGTRAP");
  return -1;
}

static volatile sig_atomic_t sigtrap_caught;
static void on_own_sigtrap(int sig) { sigtrap_caught = sig == SIGTRAP; }

/* A SIGTRAP of its own, caught by its own handler: 0 when the handler ran and sigaction showed it. */
static int catch_own_sigtrap(void) {
  if (own_handler(SIGTRAP, on_own_sigtrap) != 0) return -1;
  raise(SIGTRAP);
  if (!sigtrap_caught) fprintf(stderr, "the program's SIGTRAP handler did not run\n");
  return sigtrap_caught ? 0 : -1;
}

static sigjmp_buf sigbus_caught;
static void on_own_sigbus(int sig) {
  (void)sig;
  siglongjmp(sigbus_caught, 1);
}

/* A store past the end of a file of its own, caught by its own SIGBUS handler: 0 when the handler ran and
 * sigaction showed it. */
static int catch_own_sigbus(void) {
  char path[] = "/tmp/pmem-log-sigbus-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0 || unlink(path) != 0 || ftruncate(fd, 4096) != 0) return perror("a file of its own"), -1;
  volatile char* past = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (past == MAP_FAILED) return perror("mmap"), -1;
  if (own_handler(SIGBUS, on_own_sigbus) != 0) return -1;
  volatile int caught = 0;
  if (sigsetjmp(sigbus_caught, 1) == 0) past[4096] = 1; /* the file ends at 4096 */
  else caught = 1;
  signal(SIGBUS, SIG_DFL);
  munmap((void*)past, 8192);
  if (!caught) fprintf(stderr, "a store past the end of a mapped file raised no SIGBUS\n");
  return caught ? 0 : -1;
}

static const char* then_command = NULL;

/* The plugin beside the program's executable, loaded once the log is mapped, as an engine loads its backend. */
static int load_plugin(void) {
  char path[4096] = "libpmem-log-plugin.so";
  if (!plugin_by_name) {
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0) return perror("/proc/self/exe"), 4;
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, "libpmem-log-plugin.so");
  }
  void* plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) return fprintf(stderr, "dlopen: %s\n", dlerror()), 4;
  plugin_flush = (void (*)(const void*, size_t))dlsym(plugin, "plugin_flush");
  plugin_fence = (void (*)(void))dlsym(plugin, "plugin_fence");
  return plugin_flush && plugin_fence ? 0 : (fprintf(stderr, "dlsym: %s\n", dlerror()), 4);
}

static int usage(void) {
  fprintf(stderr,
          "usage: pmem-log append FILE N [--api ROUTE] [--bug NAME] [--threads T]\n"
          "                              [--records-by memcpy|read] [--signals normal|blocked] [--own-sigbus no|yes]\n"
          "                              [--own-sigtrap no|yes]\n"
          "                              [--then COMMAND] [--plugin-by path|name]\n"
          "       pmem-log check FILE [--threads T] [--bug torn-commit] [--require returned|prefix]\n"
          "ROUTE: libpmem pmem2 asm asm-unreported nt-unreported plugin write write-dsync msync msync-async fsync "
          "fdatasync\n"
          "       syncfs sync sync-file-range\n");
  return 2;
}

static int map_file(const char* path, int create) {
  if (api == API_LIBPMEM) {
    size_t mapped;
    int is_pmem;
    base = pmem_map_file(path, FILE_BYTES, create ? PMEM_FILE_CREATE : 0, 0600, &mapped, &is_pmem);
    return base ? 0 : (perror(path), 3);
  }
  const int dsync = api == API_WRITE_DSYNC ? O_DSYNC : 0;
  int fd = open(path, O_RDWR | dsync | (create ? O_CREAT : 0), 0600);
  if (fd < 0 || (create && ftruncate(fd, FILE_BYTES) != 0)) return perror(path), 3;
  if (api == API_WRITE || api == API_WRITE_DSYNC) {
    /* The log in the program's own memory, as the file holds it; its changes reach the file by pwrite. */
    base = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    file_fd = fd;
    return base == MAP_FAILED || pread(fd, base, FILE_BYTES, 0) < 0 ? (perror(path), 3) : 0;
  }
  if (api == API_PMEM2) {
    struct pmem2_config* cfg;
    struct pmem2_source* src;
    struct pmem2_map* map;
    if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
        pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) || pmem2_map_new(&map, cfg, src)) {
      pmem2_perror("pmem2");
      return 3;
    }
    base = pmem2_map_get_address(map);
    pmem2_flush = pmem2_get_flush_fn(map);
    pmem2_drain = pmem2_get_drain_fn(map);
    return 0;
  }
  base = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (api >= API_FSYNC) file_fd = fd;
  else close(fd);
  return base == MAP_FAILED ? (perror("mmap"), 3) : 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const int appending = strcmp(argv[1], "append") == 0;
  if (!appending && strcmp(argv[1], "check") != 0) return usage();
  const char* path = argv[2];
  uint64_t n = 0;
  int arg = 3;
  if (appending) {
    if (argc < 4) return usage();
    n = strtoull(argv[3], NULL, 10);
    arg = 4;
  }
  for (; arg + 1 < argc; arg += 2) {
    const char *opt = argv[arg], *val = argv[arg + 1];
    if (strcmp(opt, "--threads") == 0) threads = atoi(val);
    else if (strcmp(opt, "--api") == 0) {
      int found = 0;
      for (int a = 0; a < (int)(sizeof api_names / sizeof *api_names); ++a)
        if (strcmp(val, api_names[a]) == 0) api = (enum api)a, found = 1;
      if (!found) return usage();
    } else if (strcmp(opt, "--bug") == 0) {
      static const char* names[] = {"none",        "no-flush",      "no-fence",    "commit-first",
                                    "torn-commit", "short-persist", "cross-fence", "unfenced-commit"};
      int found = 0;
      for (int b = 0; b < 8; ++b)
        if (strcmp(val, names[b]) == 0) bug = (enum bug)b, found = 1;
      if (!found) return usage();
    } else if (strcmp(opt, "--records-by") == 0) records_by_read = strcmp(val, "read") == 0;
    else if (strcmp(opt, "--signals") == 0) block_signals = strcmp(val, "blocked") == 0;
    else if (strcmp(opt, "--own-sigbus") == 0) own_sigbus = strcmp(val, "yes") == 0;
    else if (strcmp(opt, "--own-sigtrap") == 0) own_sigtrap = strcmp(val, "yes") == 0;
    else if (strcmp(opt, "--then") == 0) then_command = val;
    else if (strcmp(opt, "--plugin-by") == 0 && (strcmp(val, "path") == 0 || strcmp(val, "name") == 0))
      plugin_by_name = strcmp(val, "name") == 0;
    else if (strcmp(opt, "--require") == 0 && (strcmp(val, "returned") == 0 || strcmp(val, "prefix") == 0))
      require_returned = strcmp(val, "returned") == 0;
    else return usage();
  }
  if (arg != argc || threads < 1 || threads > MAX_THREADS || n > CAPACITY || (bug == BUG_CROSS_FENCE && threads != 2))
    return usage();
  unsigned a, b, c, d;
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
  has_clwb = (b >> 24) & 1;
  if (!appending) {
    api = API_MSYNC; /* a plain read-only look */
    int rc = map_file(path, 0);
    if (rc) return rc;
    uint64_t records = 0;
    for (int log = 0; log < threads; ++log)
      if (check_log(log, &records)) return 1;
    const char* done = getenv("PMLAB_CRASH_OPS_DONE");
    const uint64_t returned = done ? strtoull(done, NULL, 10) : 0;
    if (require_returned && records < returned) {
      fprintf(stderr, "%llu records committed, but %llu appends had returned\n", (unsigned long long)records,
              (unsigned long long)returned);
      return 1;
    }
    return 0;
  }
  int rc = map_file(path, 1);
  if (rc) return rc;
  if (own_sigbus && catch_own_sigbus() != 0) return 4;
  if (own_sigtrap && catch_own_sigtrap() != 0) return 4;
  if (api == API_PLUGIN && load_plugin() != 0) return 4;
  for (int t = 0; t < threads && records_by_read; ++t)
    if (pipe(record_pipe[t]) != 0) return perror("pipe"), 4;
  pthread_barrier_init(&step, NULL, (unsigned)threads);
  pthread_t tid[MAX_THREADS];
  struct worker w[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    w[t].log = t;
    w[t].n = n;
    if (threads == 1) run_worker(&w[t]);
    else pthread_create(&tid[t], NULL, run_worker, &w[t]);
  }
  if (threads > 1)
    for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  /* A program that starts another when it is done (a server's helper, a test's next step). */
  if (then_command && system(then_command) != 0) return 5;
  return 0;
}
