// The tracer inside a program that `pmlab crash exec` runs: what the interposed calls (interpose_*.cpp) and
// the header route (pmlab/trace.h) report, written as a trace (pmlab/crash/exec/trace_format.hpp).
//
// It is loaded into programs nobody here wrote, so it is small and self-contained: no part of pmlab, no
// exceptions out of it, its own mmap and munmap by system call (it interposes the library's). One lock
// orders every event of every thread, so the trace is one sequence; what a thread does between two of
// its events it does alone as far as the trace can tell.
//
// Stores to persistent mappings are found without instrumenting the program: every region has a shadow
// (its content when last recorded), and at a write-back the written-back lines, at a fence every written
// page, are compared with it. Which pages were written comes from userfaultfd write-protection
// (write_tracking.hpp), so a fence costs what was written, not the size of the pool. Where that is
// unavailable (an older kernel, a file system userfaultfd cannot protect) every page of the region is
// compared at every fence, and the trace says so.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "pmlab/crash/exec/trace_format.hpp"

namespace pmlab_trace {

namespace trace = pmlab::crash::exec::trace;

// True in the traced process, once its trace file is open: the process pmlab started (PMLAB_TRACE_PID) from
// its start, or a process that one started from its first mapping of persistent memory.
bool active() noexcept;
// True where active, or where a mapping of persistent memory would make it so: such a process answers
// pmem_has_auto_flush for the domain under test and tells pmlab/trace.h that it is traced.
bool may_trace() noexcept;
// The durability domain under test (PMLAB_TRACE_DOMAIN): eADR makes pmem_has_auto_flush true.
bool eadr() noexcept;

// The calls of the runtime itself (libpmem's persist calling msync, a copy's flush) are not events of
// their own: only the outermost interposed call on a thread reports.
class Outermost {
 public:
  Outermost() noexcept;
  ~Outermost();
  Outermost(const Outermost&) = delete;
  Outermost& operator=(const Outermost&) = delete;
  explicit operator bool() const noexcept { return outermost_; }

 private:
  bool outermost_;
};

// A shared, writable file mapping was made. `persistent`: known to be persistent memory (a PMDK library made
// it, which maps pools only, or it is a persistent mapping mremap moved); otherwise it is persistent only
// when the file is one of the --pool files.
void mapped(void* address, size_t length, int fd, off_t offset, bool persistent) noexcept;
// A private, writable file mapping was made: when the file is a --pool file, the trace notes (once) that its
// stores never reach the file, since the program would otherwise find only "no persistent memory" said of it.
void mapped_private(int fd) noexcept;
// Before an unmap, or a fixed mapping over the range: the part of each region inside it is captured one
// last time and ends; the rest of the region goes on.
void unmapping(void* address, size_t length) noexcept;

// The file of a persistent mapping, at one of its addresses.
struct MappedFile {
  std::string path;
  uint64_t device = 0, inode = 0, offset = 0;
};
// Before a mremap of [address, address+length): when a persistent region holds `address`, its file there goes
// to `file`, the range ends as unmapping ends it, and the call returns true.
bool remapping(void* address, size_t length, MappedFile* file) noexcept;
// After the mremap (or after it failed, at the old range): the file's mapping at [address, address+length) is
// traced from here on, as a mapping of it made now.
void remapped(void* address, size_t length, const MappedFile& file) noexcept;

// A write(2), pwrite(2) or one of their vectored kin of `n` bytes to `fd` at file offset `at` (none: at the
// file position) is about to run. When the file is a --pool file, the runtime's view of it is made or grown
// to cover the write first, with the file's content as its starting point, `write` says where the write
// goes, and the call returns true; otherwise the write is no event. A process the program started is traced
// from its first such write on, as from its first mapping of persistent memory.
struct FileWrite {
  uint64_t device = 0, inode = 0, offset = 0;
  bool synced = false;  // the descriptor was opened O_DSYNC or O_SYNC: durable when the call returns
  uint64_t viewed = 0;  // how far the runtime's view of the file reaches: a write past it is no event
};
bool file_will_write(int fd, std::optional<uint64_t> at, size_t n, FileWrite* write) noexcept;
// The write stored its first `n` bytes: on a DAX file system the kernel's copy, non-temporal stores whose
// partial lines go through the cache and are written back; and a fence when `write.synced`.
void file_wrote(const FileWrite& write, size_t n, uintptr_t site) noexcept;

// Whether `fd` is a --pool file, whose writes are traced (a stdio stream's, asked when it is opened).
bool written_pool_file(int fd) noexcept;
// Flushes the stdio streams of --pool files, tracing what they write (interpose_stdio.cpp): at the exit,
// before its record, since the C library flushes them only after the runtime's last word.
void flush_pool_streams() noexcept;

// The program is about to unlink, rename or link the file at `path` (relative to `dirfd`, as the *at calls take
// it; `at_flags` as fstatat's: AT_SYMLINK_NOFOLLOW, or 0 to follow a symbolic link there, AT_EMPTY_PATH for
// the file `dirfd` itself): when that is a persistent file, true, and `file` says which and by what absolute
// path. After the call succeeded, `file_gone` records how its names changed.
struct TracedFile {
  uint64_t device = 0, inode = 0;
  std::string path;  // traced_file_at: the name the call is about to take away, move or link
};
bool traced_file_at(int dirfd, const char* path, TracedFile* file, int at_flags = AT_SYMLINK_NOFOLLOW) noexcept;
// The program is about to rename or link a file that is none of the persistent files to `to` (at `to_dir`):
// where that is a --pool path or below a --pool directory, the --pool files as they are now are where the
// run starts (a file the move replaces among them).
void arriving(int to_dir, const char* to) noexcept;
// The program has renamed or linked the file at `from` (at `from_dir`), which is none of the persistent files,
// to `to` (at `to_dir`): where that is a --pool path or below a --pool directory, the file is one from now on,
// with its content then as its starting point, and `file` says which (the rename's or link's record follows).
bool file_arrived(int from_dir, const char* from, int to_dir, const char* to, TracedFile* file) noexcept;
// The program made (`made`) or removed the directory `path` at `dirfd`; `full` is its absolute path, which a
// removal reads before the call (directory_path). A directory below a --pool directory is recorded.
std::string directory_path(int dirfd, const char* path) noexcept;
void directory_changed(const std::string& full, bool made) noexcept;
// The program is about to rename `path` at `dirfd`: its absolute path where it is a directory below a --pool
// directory, else "". Once the rename succeeded, `directory_renamed` records where it went (`to` at `to_dir`),
// and with it all below it.
std::string directory_renaming(int dirfd, const char* path) noexcept;
void directory_renamed(const std::string& from, int to_dir, const char* to) noexcept;
// `to` (at `to_dir`): where a rename moved the file or the new name a link gave it; null when the call only
// took a name away.
void file_gone(const TracedFile& file, trace::GoneCall call, uintptr_t site, int to_dir = -1,
               const char* to = nullptr) noexcept;
// The program is about to resize the file `fd` (or at `path` of `dirfd`, when fd < 0) to `length` bytes:
// when that is a persistent file, true, and `file` says which (what its mappings show is recorded first).
// After the call succeeded, `file_resized` records its new length.
bool file_will_resize(int fd, int dirfd, const char* path, uint64_t length, TracedFile* file) noexcept;
void file_resized(const TracedFile& file, uint64_t length, uintptr_t site) noexcept;

// Events, each with the return address of the call that made it.
void writeback(const void* p, size_t n, trace::WritebackKind kind, uintptr_t site) noexcept;
// [p, p+n) was just stored with non-temporal stores (recorded with its write-back).
void stored_non_temporal(const void* p, size_t n, uintptr_t site) noexcept;
// What a copy stored into its destination: the bytes at `source`, or `fill` repeated where source is null.
struct CopyContent {
  const void* source = nullptr;
  unsigned char fill = 0;
};
// A copy is about to write [dest, dest+n).
void copying(const void* dest, size_t n) noexcept;
// A copy wrote [dest, dest+n), then wrote it back (`kind`). Its whole lines are recorded from `content`,
// not read back from memory that the copy's non-temporal stores or flushes have just taken out of the
// cache (a read that costs a miss a line); its partial lines went through the cache and are compared.
void copied(const void* dest, size_t n, const CopyContent& content, trace::WritebackKind kind, uintptr_t site) noexcept;
void fence(uintptr_t site) noexcept;
// A write-back of [p, p+n) and a fence: pmem_persist, a persisting copy; or `call`, the kernel's msync, whose
// write-back is the kernel's (trace::WritebackKind::synced).
void persist(const void* p, size_t n, uintptr_t site, trace::FenceCall call = trace::FenceCall::fence) noexcept;
// The program msynced [p, p+n) without MS_SYNC, which Linux does nothing for (MS_ASYNC has been a no-op since
// 2.6.19): no event; the trace notes it once, since the program may count on it.
void msynced_without_sync(const void* p, size_t n) noexcept;
// Files whose dirty pages the kernel was asked to write back: fsync and fdatasync name one file, syncfs its
// file system, sync every file; sync_file_range one part of one file.
struct SyncedFiles {
  using Scope = trace::SyncScope;  // directory: a directory's entries, no file's data
  Scope scope = Scope::all;
  uint64_t device = 0, inode = 0;      // file and directory: both; file_system: the device
  uint64_t from = 0, to = UINT64_MAX;  // the part of the file, in bytes from its start
  int fd = -1;                         // what it was synced by (a directory's path is read from it)
};
// The kernel wrote back the part of every persistent mapping of the files `which` names, and made it
// durable by `fence` (none: sync_file_range, which promises no durability). A file no persistent mapping
// shows is no event.
void synced(const SyncedFiles& which, uintptr_t site, std::optional<trace::FenceCall> fence) noexcept;
// The program marked the start (or the end) of one of its operations (pmlab/trace.h).
void operation(trace::OperationMark mark, uintptr_t site) noexcept;
// The last crash point: everything stored is captured, then the exit record.
void exiting(int status) noexcept;

// The program's own flush, fence and non-temporal store instructions that crash exec found (PMLAB_TRACE_TRAPS,
// pmlab/crash/exec/trap_format.hpp), each made a breakpoint that reports it as the program runs it
// (traps.cpp). Called at the start of every process the runtime is loaded into, before any thread.
void install_traps(const char* path) noexcept;
// True while some module of the file is not loaded yet (interpose_dl.cpp); after the program loaded code
// (dlopen), traps_after_load traps the sites of the modules that came with it.
bool traps_waiting() noexcept;
void traps_after_load() noexcept;
// At the exit: the modules of the file that the program loaded but that were never trapped (loaded by their
// names alone, with no dlsym after), for the trace's notes ("": none).
std::string traps_missed() noexcept;
// What was trapped, and what could not be, for the trace's notes ("" when nothing was asked).
std::string traps_note() noexcept;
// True where a pmlab/trace.h report comes from a function whose instructions are trapped (`site`, a return
// address): the trap has reported what the call reports.
bool reported_by_traps(uintptr_t site) noexcept;
// True while SIGTRAP is the runtime's: the program's masks must not block it.
bool takes_sigtrap() noexcept;
// The program's own action for SIGTRAP, read (old) and set (act) instead of the real one; false when SIGTRAP
// is not the runtime's.
bool program_sigtrap(const struct sigaction* act, struct sigaction* old) noexcept;

// True when [p, p+n) lies in a persistent region (msync of anything else is not an event).
bool persistent(const void* p, size_t n) noexcept;

// Where stores to protected pages are SIGBUS signals to the thread that stored (signals mode):
// A C library call is about to make the kernel store into [p, p+n) (read into a pool), which cannot take a
// signal: the pages are found unprotected, and stay so until kernel_stored.
void kernel_will_store(const void* p, size_t n) noexcept;
void kernel_stored(const void* p, size_t n) noexcept;
// True while SIGBUS is the runtime's: the program's masks must not block it.
bool takes_sigbus() noexcept;
// The program's own action for SIGBUS, read (old) and set (act) instead of the real one; false when SIGBUS
// is not the runtime's (then the real sigaction is the program's).
bool program_sigbus(const struct sigaction* act, struct sigaction* old) noexcept;

}  // namespace pmlab_trace
