/* pmlab/trace.h: tell `pmlab crash exec` about persistence a program does with its own instructions.
 *
 * A program that persists through libpmem, libpmem2 or libpmemobj needs nothing: pmlab's preloaded runtime
 * sees those calls. Nor does a program with its own flush macros (inline clwb / clflushopt / sfence / movnti):
 * crash exec finds those instructions in its code and traps each as it runs. A program may instead report
 * them itself (`pmlab crash exec --own-instructions reported`), or report those that cannot be trapped (a
 * non-temporal store relative to rip), with one call beside each instruction, e.g.
 *
 *     #define MY_CLWB(p)  do { asm volatile("clwb %0" : "+m"(*(volatile char *)(p))); pmlab_flush((p), 64); } while (0)
 *     #define MY_SFENCE() do { pmlab_fence(); asm volatile("sfence" ::: "memory"); } while (0)
 *
 * Each call *reports* what the program just did (or is about to do, for the fence); none of them flushes,
 * fences or stores anything itself, so the program keeps its own instructions and behaves the same with or
 * without pmlab. Without the runtime (not run under `pmlab crash exec`) every call returns after one load
 * and one test: the header needs no library to link, only the C library's dlsym (in libc since glibc 2.34;
 * link -ldl before that).
 *
 *   pmlab_flush(p, n)     the cache lines of [p, p+n) were written back (clwb, clflushopt, clflush)
 *   pmlab_fence()         a store fence is about to be issued: the crash point is just before it
 *   pmlab_persist(p, n)   pmlab_flush(p, n) then pmlab_fence()
 *   pmlab_nt_store(p, n)  [p, p+n) was just stored with non-temporal stores (movnti, movntdq): aligned
 *                         8-byte words of whole lines persist whole, and the lines are on their way to memory
 *   pmlab_traced()        1 when the runtime traces this process, or will once it maps persistent memory
 *
 * A program may also mark its operations, so that its checker can require every operation that returned
 * to have survived a crash, not only a consistent prefix of them:
 *
 *   pmlab_op_begin()      an operation starts (an insert, an append, a request the program will answer)
 *   pmlab_op_end()        it returned, or was acknowledged: from now on a crash must keep its effects
 *
 * Each check then reads PMLAB_CRASH_OPS_DONE (and PMLAB_CRASH_OPS_BEGUN): how many operations of all
 * threads had ended (begun) before its crash point.
 *
 * Plain stores need no call: the runtime finds them by comparing written pages at every fence.
 * Usable from C (C99 and later) and C++. Thread-safe. */
#ifndef PMLAB_TRACE_H
#define PMLAB_TRACE_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's entry points, looked up once per program (this header's own machinery). */
struct pmlab_trace_entry_points {
  int resolved; /* 0: not looked up yet */
  void (*flush)(const void*, size_t);
  void (*fence)(void);
  void (*persist)(const void*, size_t);
  void (*nt_store)(const void*, size_t);
  void (*op_begin)(void);
  void (*op_end)(void);
};

/* One lookup per translation unit, on the first call; a race between threads looks up twice, harmlessly. */
static inline const struct pmlab_trace_entry_points* pmlab_trace_entry_points_(void) {
  static struct pmlab_trace_entry_points e;
  if (__atomic_load_n(&e.resolved, __ATOMIC_ACQUIRE) == 0) {
    /* dlsym with a null handle is RTLD_DEFAULT: the process's global scope, where a preloaded library is. */
    void *f = dlsym((void*)0, "pmlab_trace_flush"), *n = dlsym((void*)0, "pmlab_trace_fence");
    void *p = dlsym((void*)0, "pmlab_trace_persist"), *s = dlsym((void*)0, "pmlab_trace_nt_store");
    __builtin_memcpy(&e.flush, &f, sizeof f);
    __builtin_memcpy(&e.fence, &n, sizeof n);
    __builtin_memcpy(&e.persist, &p, sizeof p);
    __builtin_memcpy(&e.nt_store, &s, sizeof s);
    void *b = dlsym((void*)0, "pmlab_trace_op_begin"), *d = dlsym((void*)0, "pmlab_trace_op_end");
    __builtin_memcpy(&e.op_begin, &b, sizeof b);
    __builtin_memcpy(&e.op_end, &d, sizeof d);
    __atomic_store_n(&e.resolved, 1, __ATOMIC_RELEASE);
  }
  return &e;
}

/* The cache lines of [p, p+n) were written back (clwb, clflushopt, clflush). */
static inline void pmlab_flush(const void* p, size_t n) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->flush) e->flush(p, n);
}

/* A store fence is about to be issued: the crash point is just before it. */
static inline void pmlab_fence(void) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->fence) e->fence();
}

/* pmlab_flush(p, n), then pmlab_fence(). */
static inline void pmlab_persist(const void* p, size_t n) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->persist) e->persist(p, n);
}

/* [p, p+n) was just stored with non-temporal stores (movnti, movntdq). */
static inline void pmlab_nt_store(const void* p, size_t n) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->nt_store) e->nt_store(p, n);
}

/* An operation starts. */
static inline void pmlab_op_begin(void) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->op_begin) e->op_begin();
}

/* The operation returned: a crash from now on must keep its effects. */
static inline void pmlab_op_end(void) {
  const struct pmlab_trace_entry_points* e = pmlab_trace_entry_points_();
  if (e->op_end) e->op_end();
}

/* 1 when the runtime traces this process, or will once it maps persistent memory (a process the program
 * started). */
static inline int pmlab_traced(void) {
  int (*active)(void);
  void* a = dlsym((void*)0, "pmlab_trace_active");
  __builtin_memcpy(&active, &a, sizeof a);
  return active ? active() : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* PMLAB_TRACE_H */
