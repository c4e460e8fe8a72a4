/* libpmem-log-plugin.so: pmem-log's persistence primitives for --api plugin, in a library the program loads
 * with dlopen once it runs, as a storage engine loads a flush backend or Python an extension module. Its own
 * clwb (clflush where the processor has none) and sfence, with no pmlab/trace.h call: crash exec must find
 * them in a module that was not there when the program started. */
#include <stddef.h>
#include <stdint.h>

static int has_clwb = -1;

void plugin_flush(const void* p, size_t n) {
  if (has_clwb < 0) {
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    has_clwb = (b >> 24) & 1;
  }
  for (uintptr_t line = (uintptr_t)p & ~(uintptr_t)63; line < (uintptr_t)p + n; line += 64) {
    if (has_clwb) __asm__ volatile("clwb %0" : "+m"(*(volatile char*)line));
    else __asm__ volatile("clflush %0" : "+m"(*(volatile char*)line));
  }
}

void plugin_fence(void) { __asm__ volatile("sfence" ::: "memory"); }
