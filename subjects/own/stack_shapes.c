/* stack-shapes: fences reached through many call shapes, for `pmlab crash exec`'s stack tests. One fence
 * site is reached from different callers at the same depth (the same stack pointer, another return address),
 * from a frame that allocates a varying amount on the stack (alloca), and at several recursion depths.
 *
 *   stack-shapes FILE N   maps FILE (created, 64 KiB) and persists a byte N times, each through one shape
 *
 * Built twice: optimised without frame pointers, and unoptimised with every frame on one (stack-shapes-fp). */
#define _GNU_SOURCE
#include <alloca.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmlab/trace.h"

#define FILE_BYTES (64u << 10)

/* The one fence site: every shape ends here. */
static __attribute__((noinline)) void persist_byte(char* pool, unsigned i) {
  char* p = pool + (i * 64u) % FILE_BYTES;
  *p = (char)i;
  pmlab_persist(p, 1);
  __asm__ volatile("" ::: "memory"); /* no tail call: the caller's frame stays on the stack */
}

static __attribute__((noinline)) void through_first(char* pool, unsigned i) {
  persist_byte(pool, i);
  __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_second(char* pool, unsigned i) {
  persist_byte(pool, i);
  __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_alloca(char* pool, unsigned i) {
  volatile char* scratch = alloca(16 + (i % 5) * 48);
  scratch[0] = 0;
  ((i / 5) % 2 ? through_first : through_second)(pool, i);
  __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void through_recursion(char* pool, unsigned i, unsigned depth) {
  if (depth == 0) ((i / 3) % 2 ? through_first : through_second)(pool, i);
  else through_recursion(pool, i, depth - 1);
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stack-shapes FILE N\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ftruncate(fd, FILE_BYTES) != 0) {
    perror(argv[1]);
    return 3;
  }
  char* pool = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pool == MAP_FAILED) {
    perror("mmap");
    return 3;
  }
  const unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
  /* Shapes interleave, so that each call site's cached stacks meet their neighbours'. */
  for (unsigned i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: through_first(pool, i); break;
      case 1: through_second(pool, i); break;
      case 2: through_alloca(pool, i); break;
      default: through_recursion(pool, i, i % 7); break;
    }
  }
  munmap(pool, FILE_BYTES);
  close(fd);
  return 0;
}
