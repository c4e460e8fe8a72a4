// The C library's syscall(): a program that makes a system call by its number (a raw pwrite64, an fdatasync
// written so) reaches the kernel past the calls interpose*.cpp define. Each number that one of them stands
// for is forwarded to it, as reported from where the program called syscall(); any other number goes to the
// kernel as it came. Not forwarded: rt_sigaction and rt_sigprocmask (the kernel's structures are not the C
// library's, which the runtime's own sigaction and sigprocmask take), and what makes no system call of its
// own: io_uring's submissions, a program's `syscall` instruction written in assembly. A clone given a stack
// of its own returns on that stack into this function's frame, not into the C library's leaf: a program
// that starts a thread so (rather than with clone(3) or pthread_create) is not supported.
#undef _FORTIFY_SOURCE  // the fortified read and pread are inline wrappers that would call past the runtime
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdarg>
#include <type_traits>

#include "pmlab-trace/real.hpp"

namespace pmlab_trace::detail {

[[gnu::tls_model("initial-exec")]] thread_local void* tls_syscall_caller = nullptr;

}  // namespace pmlab_trace::detail

namespace {

using pmlab_trace::detail::raw_syscall;
using pmlab_trace::detail::tls_syscall_caller;

// A system call's argument as the type the C library's function takes.
template <class T>
T as(long word) {
  if constexpr (std::is_pointer_v<T>) return reinterpret_cast<T>(word);
  else return static_cast<T>(word);
}

// While it lives, the interposed calls report the program's call of syscall() as theirs.
class ReportedFrom {
 public:
  explicit ReportedFrom(void* caller) : before_(tls_syscall_caller) { tls_syscall_caller = caller; }
  ~ReportedFrom() { tls_syscall_caller = before_; }
  ReportedFrom(const ReportedFrom&) = delete;
  ReportedFrom& operator=(const ReportedFrom&) = delete;

 private:
  void* before_;
};

long files_and_memory(long number, const long* a) {
  switch (number) {
    case SYS_write: return write(as<int>(a[0]), as<const void*>(a[1]), as<size_t>(a[2]));
    case SYS_pwrite64: return pwrite64(as<int>(a[0]), as<const void*>(a[1]), as<size_t>(a[2]), as<off64_t>(a[3]));
    case SYS_writev: return writev(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]));
    // The kernel takes the offset as two words; on x86-64 the first holds it whole.
    case SYS_pwritev: return pwritev(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]), as<off_t>(a[3]));
    case SYS_pwritev2:
      return pwritev2(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]), as<off_t>(a[3]), as<int>(a[5]));
    case SYS_read: return read(as<int>(a[0]), as<void*>(a[1]), as<size_t>(a[2]));
    case SYS_pread64: return pread64(as<int>(a[0]), as<void*>(a[1]), as<size_t>(a[2]), as<off64_t>(a[3]));
    case SYS_readv: return readv(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]));
    case SYS_preadv: return preadv(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]), as<off_t>(a[3]));
    case SYS_preadv2:
      return preadv2(as<int>(a[0]), as<const iovec*>(a[1]), as<int>(a[2]), as<off_t>(a[3]), as<int>(a[5]));
    case SYS_recvfrom:
      return recvfrom(as<int>(a[0]), as<void*>(a[1]), as<size_t>(a[2]), as<int>(a[3]), as<sockaddr*>(a[4]),
                      as<socklen_t*>(a[5]));
    case SYS_recvmsg: return recvmsg(as<int>(a[0]), as<msghdr*>(a[1]), as<int>(a[2]));
    case SYS_getrandom: return getrandom(as<void*>(a[0]), as<size_t>(a[1]), as<unsigned>(a[2]));
    case SYS_copy_file_range:
      return copy_file_range(as<int>(a[0]), as<off64_t*>(a[1]), as<int>(a[2]), as<off64_t*>(a[3]), as<size_t>(a[4]),
                             as<unsigned>(a[5]));
    case SYS_sendfile: return sendfile(as<int>(a[0]), as<int>(a[1]), as<off_t*>(a[2]), as<size_t>(a[3]));
    case SYS_splice:
      return splice(as<int>(a[0]), as<off64_t*>(a[1]), as<int>(a[2]), as<off64_t*>(a[3]), as<size_t>(a[4]),
                    as<unsigned>(a[5]));
    case SYS_fallocate: return fallocate(as<int>(a[0]), as<int>(a[1]), as<off_t>(a[2]), as<off_t>(a[3]));
    case SYS_ftruncate: return ftruncate(as<int>(a[0]), as<off_t>(a[1]));
    case SYS_truncate: return truncate(as<const char*>(a[0]), as<off_t>(a[1]));
    case SYS_fsync: return fsync(as<int>(a[0]));
    case SYS_fdatasync: return fdatasync(as<int>(a[0]));
    case SYS_syncfs: return syncfs(as<int>(a[0]));
    case SYS_sync: return sync(), 0;
    case SYS_sync_file_range:
      return sync_file_range(as<int>(a[0]), as<off64_t>(a[1]), as<off64_t>(a[2]), as<unsigned>(a[3]));
    case SYS_msync: return msync(as<void*>(a[0]), as<size_t>(a[1]), as<int>(a[2]));
    case SYS_mmap:
      return reinterpret_cast<long>(
          mmap(as<void*>(a[0]), as<size_t>(a[1]), as<int>(a[2]), as<int>(a[3]), as<int>(a[4]), as<off_t>(a[5])));
    case SYS_munmap: return munmap(as<void*>(a[0]), as<size_t>(a[1]));
    case SYS_mremap:
      return reinterpret_cast<long>(
          mremap(as<void*>(a[0]), as<size_t>(a[1]), as<size_t>(a[2]), as<int>(a[3]), as<void*>(a[4])));
    default: return raw_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  }
}

long names(long number, const long* a) {
  switch (number) {
    case SYS_open: return open(as<const char*>(a[0]), as<int>(a[1]), as<mode_t>(a[2]));
    case SYS_openat: return openat(as<int>(a[0]), as<const char*>(a[1]), as<int>(a[2]), as<mode_t>(a[3]));
    case SYS_creat: return creat(as<const char*>(a[0]), as<mode_t>(a[1]));
    case SYS_mkdir: return mkdir(as<const char*>(a[0]), as<mode_t>(a[1]));
    case SYS_mkdirat: return mkdirat(as<int>(a[0]), as<const char*>(a[1]), as<mode_t>(a[2]));
    case SYS_rmdir: return rmdir(as<const char*>(a[0]));
    case SYS_unlink: return unlink(as<const char*>(a[0]));
    case SYS_unlinkat: return unlinkat(as<int>(a[0]), as<const char*>(a[1]), as<int>(a[2]));
    case SYS_rename: return rename(as<const char*>(a[0]), as<const char*>(a[1]));
    case SYS_renameat: return renameat(as<int>(a[0]), as<const char*>(a[1]), as<int>(a[2]), as<const char*>(a[3]));
    case SYS_renameat2:
      return renameat2(as<int>(a[0]), as<const char*>(a[1]), as<int>(a[2]), as<const char*>(a[3]), as<unsigned>(a[4]));
    case SYS_link: return link(as<const char*>(a[0]), as<const char*>(a[1]));
    case SYS_linkat:
      return linkat(as<int>(a[0]), as<const char*>(a[1]), as<int>(a[2]), as<const char*>(a[3]), as<int>(a[4]));
    default: return files_and_memory(number, a);
  }
}

}  // namespace

extern "C" {

// Every number reads six words, as the C library's syscall() does whatever the call takes.
__attribute__((visibility("default"))) long syscall(long number, ...) noexcept {
  long a[6];
  va_list args;
  va_start(args, number);
  for (long& word : a) word = va_arg(args, long);
  va_end(args);
  if (number == SYS_exit_group) _exit(as<int>(a[0]));
  const ReportedFrom from(__builtin_return_address(0));
  return names(number, a);
}

}  // extern "C"
