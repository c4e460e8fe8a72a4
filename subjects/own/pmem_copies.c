/*
 * Copies of every shape libpmem and libpmem2 make, into a pool the check then reads whole.
 *
 *   pmem-copies run FILE [--api libpmem|pmem2]   copies into a new 64 KiB pool, then persists a done word
 *   pmem-copies check FILE                       an image whose done word is set must hold every byte the
 *                                                run wrote; one without it may hold anything
 *
 * The copies: persisting and not, non-temporal and temporal, unaligned at either end, across pages, a
 * plain store into a line a non-temporal copy just wrote, moves that overlap their source either way, a
 * move out of the pool itself, and fills. Under `pmlab crash exec` the durable image at the last crash
 * point is what memory held, so a trace that recorded a copy's lines other than as memory held them (from
 * a source the move had already overwritten, say) fails the check there.
 */
#include <libpmem.h>
#include <libpmem2.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define POOL_BYTES 65536
#define DONE_AT (POOL_BYTES - 64)
#define DONE 0x454e4f44u /* "DONE" */

typedef void* (*copy_fn)(void*, const void*, size_t, unsigned);
typedef void* (*fill_fn)(void*, int, size_t, unsigned);

/* What the copies go through: libpmem's functions or those a libpmem2 mapping hands out. */
struct route {
  copy_fn copy, move;
  fill_fn fill;
  void (*drain)(void);
  void (*persist)(const void*, size_t);
  unsigned nodrain, nontemporal, temporal;
};

/* The same steps on memory with the C library's functions: what the pool must hold at the end. */
static void* plain_copy(void* d, const void* s, size_t n, unsigned f) { return (void)f, memcpy(d, s, n); }
static void* plain_move(void* d, const void* s, size_t n, unsigned f) { return (void)f, memmove(d, s, n); }
static void* plain_fill(void* d, int c, size_t n, unsigned f) { return (void)f, memset(d, c, n); }
static void nothing(void) {}
static void nothing_persisted(const void* p, size_t n) { (void)p, (void)n; }

static void source_bytes(unsigned char* s, size_t n) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s[i] = (unsigned char)x;
  }
}

static void steps(unsigned char* p, const struct route* r) {
  static unsigned char s[16384];
  source_bytes(s, sizeof s);
  r->copy(p + 3, s, 9000, 0);                                   /* unaligned both ends, three pages */
  r->copy(p + 16384, s + 5, 5000, r->nontemporal | r->nodrain); /* whole lines and a partial last one */
  p[16384 + 10] = 0x77;                                         /* a plain store into a line it just wrote */
  r->drain();
  r->copy(p + 24640, s + 100, 4096, r->temporal | r->nodrain);
  r->drain();
  r->fill(p + 12000, 0xa5, 3000, 0);
  r->move(p + 100, p + 3, 6000, 0);                         /* overlapping, the destination above */
  r->move(p + 16384 - 40, p + 16384, 4000, r->nontemporal); /* overlapping, the destination below */
  r->fill(p + 30000, 0, 2000, r->nontemporal | r->nodrain);
  r->drain();
  r->move(p + 40000, p + 3, 3000, 0); /* out of the pool itself */
  *(volatile uint32_t*)(p + DONE_AT) = DONE;
  r->persist(p + DONE_AT, 4);
}

static int run(const char* path, int pmem2) {
  struct route r = {pmem_memcpy,        pmem_memmove,           pmem_memset,        pmem_drain, pmem_persist,
                    PMEM_F_MEM_NODRAIN, PMEM_F_MEM_NONTEMPORAL, PMEM_F_MEM_TEMPORAL};
  unsigned char* p;
  if (!pmem2) {
    size_t mapped;
    int is_pmem;
    p = pmem_map_file(path, POOL_BYTES, PMEM_FILE_CREATE, 0600, &mapped, &is_pmem);
    if (p == NULL) return perror(path), 3;
  } else {
    const int fd = open(path, O_RDWR | O_CREAT, 0600);
    struct pmem2_config* cfg;
    struct pmem2_source* src;
    struct pmem2_map* map;
    if (fd < 0 || ftruncate(fd, POOL_BYTES) != 0) return perror(path), 3;
    if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
        pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) || pmem2_map_new(&map, cfg, src)) {
      pmem2_perror("pmem2");
      return 3;
    }
    p = pmem2_map_get_address(map);
    r.copy = pmem2_get_memcpy_fn(map);
    r.move = pmem2_get_memmove_fn(map);
    r.fill = pmem2_get_memset_fn(map);
    r.drain = pmem2_get_drain_fn(map);
    r.persist = pmem2_get_persist_fn(map);
    r.nodrain = PMEM2_F_MEM_NODRAIN, r.nontemporal = PMEM2_F_MEM_NONTEMPORAL, r.temporal = PMEM2_F_MEM_TEMPORAL;
  }
  steps(p, &r);
  return 0;
}

static int check(const char* path) {
  static unsigned char image[POOL_BYTES], expected[POOL_BYTES];
  FILE* f = fopen(path, "rb");
  if (f == NULL) return perror(path), 3;
  const size_t got = fread(image, 1, sizeof image, f);
  fclose(f);
  if (got != sizeof image) return fprintf(stderr, "%s: %zu bytes, not %d\n", path, got, POOL_BYTES), 1;
  uint32_t done;
  memcpy(&done, image + DONE_AT, sizeof done);
  if (done != DONE) return 0;
  const struct route plain = {plain_copy, plain_move, plain_fill, nothing, nothing_persisted, 0, 0, 0};
  steps(expected, &plain);
  for (size_t i = 0; i < sizeof image; ++i)
    if (image[i] != expected[i])
      return fprintf(stderr, "done, but byte 0x%zx is 0x%02x where the run wrote 0x%02x\n", i, image[i], expected[i]),
             1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "check") == 0) return check(argv[2]);
  if (argc == 3 && strcmp(argv[1], "run") == 0) return run(argv[2], 0);
  if (argc == 5 && strcmp(argv[1], "run") == 0 && strcmp(argv[3], "--api") == 0 &&
      (strcmp(argv[4], "libpmem") == 0 || strcmp(argv[4], "pmem2") == 0))
    return run(argv[2], strcmp(argv[4], "pmem2") == 0);
  fprintf(stderr, "usage: pmem-copies run FILE [--api libpmem|pmem2]\n       pmem-copies check FILE\n");
  return 2;
}
