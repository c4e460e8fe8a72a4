// What signals mode (write_tracking.hpp) needs of the C library, interposed by preloading like the calls in
// interpose.cpp: the calls that make the kernel store into the program's memory, whose pages a store
// must find unprotected (a kernel store cannot take a signal: it would fail with EFAULT), and the calls
// that set SIGBUS's action or block it (SIGBUS is the runtime's while it takes stores this way); likewise
// SIGTRAP's, while the program's own instructions are trapped (traps.cpp). Each forwards to the real
// function; outside signals mode each adds one test.
//
// A store the kernel makes by any other call (a `syscall` instruction of the program's own, io_uring, aio)
// into a protected page fails with EFAULT in signals mode: faults mode (pmlab crash exec --stores faults)
// takes those too. The same calls made through syscall() come here (interpose_syscall.cpp).
#undef _FORTIFY_SOURCE  // the fortified read, pread and recv are inline wrappers, not symbols to define
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/tracer.hpp"

namespace {

// The memory a call makes the kernel store into: up to two ranges and an iovec array, unprotected for
// the call (in signals mode) and released when it returns.
class KernelStores {
 public:
  KernelStores(const void* p, size_t n, const void* p2 = nullptr, size_t n2 = 0, const iovec* v = nullptr,
               int count = 0) noexcept
      : p_(p), n_(p == nullptr ? 0 : n), p2_(p2), n2_(p2 == nullptr ? 0 : n2), v_(v), count_(v == nullptr ? 0 : count) {
    active_ = pmlab_trace::takes_sigbus();
    if (active_) each(pmlab_trace::kernel_will_store);
  }
  ~KernelStores() {
    if (!active_) return;
    const int saved = errno;
    each(pmlab_trace::kernel_stored);
    errno = saved;
  }
  KernelStores(const KernelStores&) = delete;
  KernelStores& operator=(const KernelStores&) = delete;

 private:
  void each(void (*f)(const void*, size_t) noexcept) const {
    f(p_, n_);
    f(p2_, n2_);
    for (int i = 0; i < count_; ++i) f(v_[i].iov_base, v_[i].iov_len);
  }
  const void* p_;
  size_t n_;
  const void* p2_;
  size_t n2_;
  const iovec* v_;
  int count_;
  bool active_ = false;
};

// A mask the program sets, without SIGBUS while it is the runtime's (a write fault on a thread that blocks
// it would kill the program), and without SIGTRAP while the program's own instructions are trapped.
const sigset_t* without_runtime_signals(int how, const sigset_t* set, sigset_t& copy) {
  if (set == nullptr || how == SIG_UNBLOCK) return set;
  const bool bus = pmlab_trace::takes_sigbus() && sigismember(set, SIGBUS);
  const bool trap = pmlab_trace::takes_sigtrap() && sigismember(set, SIGTRAP);
  if (!bus && !trap) return set;
  copy = *set;
  if (bus) sigdelset(&copy, SIGBUS);
  if (trap) sigdelset(&copy, SIGTRAP);
  return &copy;
}

}  // namespace

extern "C" {

// --- calls that make the kernel store into memory ------------------------------------------------------

__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t n) {
  PMLAB_REAL(read, nullptr);
  KernelStores k(buf, n);
  return real_fn(fd, buf, n);
}
__attribute__((visibility("default"))) ssize_t pread(int fd, void* buf, size_t n, off_t at) {
  PMLAB_REAL(pread, nullptr);
  KernelStores k(buf, n);
  return real_fn(fd, buf, n, at);
}
__attribute__((visibility("default"))) ssize_t pread64(int fd, void* buf, size_t n, off64_t at) {
  PMLAB_REAL(pread64, nullptr);
  KernelStores k(buf, n);
  return real_fn(fd, buf, n, at);
}
__attribute__((visibility("default"))) ssize_t readv(int fd, const iovec* v, int count) {
  PMLAB_REAL(readv, nullptr);
  KernelStores k(nullptr, 0, nullptr, 0, v, count);
  return real_fn(fd, v, count);
}
__attribute__((visibility("default"))) ssize_t preadv(int fd, const iovec* v, int count, off_t at) {
  PMLAB_REAL(preadv, nullptr);
  KernelStores k(nullptr, 0, nullptr, 0, v, count);
  return real_fn(fd, v, count, at);
}
__attribute__((visibility("default"))) ssize_t preadv64(int fd, const iovec* v, int count, off64_t at) {
  PMLAB_REAL(preadv64, nullptr);
  KernelStores k(nullptr, 0, nullptr, 0, v, count);
  return real_fn(fd, v, count, at);
}
__attribute__((visibility("default"))) ssize_t preadv2(int fd, const iovec* v, int count, off_t at, int flags) {
  PMLAB_REAL(preadv2, nullptr);
  KernelStores k(nullptr, 0, nullptr, 0, v, count);
  return real_fn(fd, v, count, at, flags);
}
__attribute__((visibility("default"))) ssize_t preadv64v2(int fd, const iovec* v, int count, off64_t at, int flags) {
  PMLAB_REAL(preadv64v2, nullptr);
  KernelStores k(nullptr, 0, nullptr, 0, v, count);
  return real_fn(fd, v, count, at, flags);
}
__attribute__((visibility("default"))) ssize_t recv(int fd, void* buf, size_t n, int flags) {
  PMLAB_REAL(recv, nullptr);
  KernelStores k(buf, n);
  return real_fn(fd, buf, n, flags);
}
__attribute__((visibility("default"))) ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from,
                                                        socklen_t* from_bytes) {
  PMLAB_REAL(recvfrom, nullptr);
  KernelStores k(buf, n, from, from_bytes != nullptr ? *from_bytes : 0);
  return real_fn(fd, buf, n, flags, from, from_bytes);
}
__attribute__((visibility("default"))) ssize_t recvmsg(int fd, msghdr* m, int flags) {
  PMLAB_REAL(recvmsg, nullptr);
  if (m == nullptr) return real_fn(fd, m, flags);  // the C library's EFAULT
  KernelStores k(m->msg_name, m->msg_namelen, m->msg_control, m->msg_controllen, m->msg_iov,
                 static_cast<int>(m->msg_iovlen));
  return real_fn(fd, m, flags);
}
// fread reads large requests straight into the caller's buffer.
__attribute__((visibility("default"))) size_t fread(void* buf, size_t size, size_t count, FILE* stream) {
  PMLAB_REAL(fread, nullptr);
  KernelStores k(buf, size * count);
  return real_fn(buf, size, count, stream);
}
__attribute__((visibility("default"))) ssize_t getrandom(void* buf, size_t n, unsigned flags) {
  PMLAB_REAL(getrandom, nullptr);
  KernelStores k(buf, n);
  return real_fn(buf, n, flags);
}

// --- SIGBUS ---------------------------------------------------------------------------------------------

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  PMLAB_REAL(sigaction, nullptr);
  if (sig == SIGBUS && pmlab_trace::program_sigbus(act, old)) return 0;
  if (sig == SIGTRAP && pmlab_trace::program_sigtrap(act, old)) return 0;
  return real_fn(sig, act, old);
}
__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  PMLAB_REAL(signal, nullptr);
  if ((sig != SIGBUS && sig != SIGTRAP) || handler == SIG_ERR) return real_fn(sig, handler);
  struct sigaction act {};
  struct sigaction old {};
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;  // signal()'s BSD semantics, as glibc gives them
  const bool kept = sig == SIGBUS ? pmlab_trace::program_sigbus(&act, &old) : pmlab_trace::program_sigtrap(&act, &old);
  if (!kept) return real_fn(sig, handler);
  return old.sa_handler;  // shares its place with sa_sigaction, as signal() returns either
}
__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  PMLAB_REAL(sigprocmask, nullptr);
  sigset_t copy;
  return real_fn(how, without_runtime_signals(how, set, copy), old);
}
__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  PMLAB_REAL(pthread_sigmask, nullptr);
  sigset_t copy;
  return real_fn(how, without_runtime_signals(how, set, copy), old);
}

}  // extern "C"
