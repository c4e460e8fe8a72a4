// The trace a program leaves under pmlab's preloaded runtime (src/pmlab-trace), read by `pmlab crash exec`.
//
// Shared by both sides, so it depends on nothing: the runtime is loaded into foreign programs and links no
// part of pmlab. A trace is a 64-byte FileHeader, then records, each a RecordHeader and a payload, 8-byte
// aligned. The runtime writes it through a shared mapping and counts the bytes in the header after every
// record, so a program killed mid-run leaves every record it finished.
//
// What the records say, in the order they happened (one lock orders them across threads):
//   region     a persistent mapping: a file range mapped shared and writable by PMDK or named by --pool;
//              or (RegionHow::written) the runtime's own view of a --pool file the program writes with
//              write(2) and its kin, which those calls alone change
//   base_page  a page of that file range as it was when first mapped (only pages that are not all zero,
//              and of those only the lines that are not): the durable image the run starts from
//   line       a cache line of a region now holds these 64 bytes (its content changed since it was last
//              recorded); `how` says whether non-temporal stores wrote it (aligned words whole) or plain ones
//   writeback  a thread wrote back a range (a flush, or the write-back half of a non-temporal copy)
//   fence      a thread fenced: a crash point just before it, then its write-backs are durable
//   stack      a call stack, once per distinct stack (fences name theirs by id)
//   module     a loaded object and its segments, to symbolize return addresses afterwards
//   unmap      a region was unmapped (its pending lines stay pending: an unmap writes nothing back)
//   note       a line of text the runtime wants in the report (how it tracked stores, what it skipped)
//   exit       the program is exiting: the last crash point
//   operation  the program marked the start or the end of one of its operations (pmlab/trace.h's
//              pmlab_op_begin / pmlab_op_end): a check learns how many had ended before its crash point
//   gone       a name of a persistent file changed: the program unlinked it, renamed another file over it,
//              renamed it (then to the path that follows), or linked it (GoneCall::link: a new name, the path
//              that follows, beside its others), or swapped it with another (GoneCall::exchange); the name
//              it had follows that (file-system metadata)
//   resize     a persistent file was cut short or extended by ftruncate, truncate or an open with O_TRUNC
//   synced     what the sync whose fence follows synced: a file, a directory's entries, a file system or
//              every file (--metadata at-own-sync makes a change durable at a sync of what it changed)
//   directory  a --pool directory (a root), a directory below one when the run starts, or one the program
//              made, removed or moved there then (DirectoryEvent): crash images hold those a crash leaves, and
//              a file below a root is named in them by its path below that root
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace pmlab::crash::exec::trace {

inline constexpr char kMagic[8] = {'P', 'M', 'L', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kVersion = 10;
inline constexpr uint32_t kLineBytes = 64;
inline constexpr uint32_t kPageBytes = 4096;
inline constexpr uint32_t kNoRegion = 0xffffffffu;
inline constexpr uint32_t kNoStack = 0;  // stack ids count from 1
inline constexpr uint32_t kMaxFrames = 32;

// How the runtime found stores to persistent mappings.
enum class WriteTracking : uint32_t {
  faults = 0,   // userfaultfd write-protection, each first store to a page reported to the runtime's thread
  scan = 1,     // userfaultfd asynchronous write-protection, written pages found by PAGEMAP_SCAN at each capture
  compare = 2,  // every page of every region compared at every capture (no write tracking available)
  signals = 3,  // userfaultfd write-protection, each first store to a page a SIGBUS to the thread that stored
  calls = 4,    // no mapping to track: the program changed its --pool files with write(2) and its kin alone
};
// In words, for a run's summary; null for a value this pmlab does not know.
constexpr const char* describe(WriteTracking w) noexcept {
  switch (w) {
    case WriteTracking::faults: return "write-protected pages, each first store reported (userfaultfd)";
    case WriteTracking::scan: return "write-protected pages scanned at each fence (userfaultfd, PAGEMAP_SCAN)";
    case WriteTracking::compare: return "every page compared at every fence";
    case WriteTracking::signals:
      return "write-protected pages, each first store a SIGBUS to the storing thread (userfaultfd)";
    case WriteTracking::calls: return "the program's write(2) calls (it mapped no persistent memory writable)";
  }
  return nullptr;
}

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // sizeof(FileHeader)
  uint64_t used_bytes;    // bytes of records after the header
  uint64_t pid;
  uint32_t complete;  // 1 once the exit record is written
  uint32_t write_tracking;
  uint64_t reserved[3];
};
static_assert(sizeof(FileHeader) == 64);

enum class Kind : uint8_t {
  region = 1,
  base_page,
  line,
  writeback,
  fence,
  stack,
  module,
  unmap,
  note,
  exit,
  operation,
  gone,
  resize,
  synced,
  directory
};

struct RecordHeader {
  uint8_t kind;
  // region: RegionHow; writeback: WritebackKind; line: LineHow; fence: FenceCall; operation: OperationMark;
  // gone: GoneCall; synced: SyncScope; directory: DirectoryEvent
  uint8_t flags;
  uint16_t thread;  // the thread that caused it, numbered from 0 in order of first event
  uint32_t bytes;   // the whole record, header included, a multiple of 8
};
static_assert(sizeof(RecordHeader) == 8);

// mapped: the program's mapping. written: a view of the runtime's own, of a file the program changes with
// write(2), pwrite(2) and their vectored kin: on a DAX file system the kernel copies such a write in with
// non-temporal stores (the edges of a line through the cache, then written back), and nothing orders them
// until the file is synced; a descriptor opened O_DSYNC or O_SYNC syncs before the call returns. The file
// is as long as its writes reached.
enum class RegionHow : uint8_t { mapped = 0, written = 1 };

struct RegionRecord {
  uint32_t id;
  // The path follows, not terminated. 0: the file had no name then (O_TMPFILE, or unlinked while open), or
  // none below the --pool files (it is being renamed or linked in from outside them), and has one only from a
  // link or rename that names it (a gone record that follows).
  uint32_t path_bytes;
  uint64_t address;  // where the run mapped it
  uint64_t length;
  uint64_t file_offset;
  uint64_t file_size;
  uint64_t device;
  uint64_t inode;
};

// A pool's metadata is sparse (a few lines a page, PMDK's heap headers), so a base page carries only its
// lines that are not all zero: the record is what the program's start costs to write.
struct BasePageRecord {
  uint32_t region;
  uint32_t reserved;
  uint64_t offset;  // in the region, page-aligned
  uint64_t lines;   // bit k: line k is not all zero, and follows (in order of k); the others are zero
};
static_assert(kPageBytes / kLineBytes == 64, "one bit of BasePageRecord::lines a line");

// The bytes that follow a base page record of `lines`.
constexpr size_t base_page_bytes(uint64_t lines) noexcept { return size_t(std::popcount(lines)) * kLineBytes; }

// The whole page a base page record holds, from the lines that follow it.
inline void expand_base_page(uint64_t lines, const std::byte* from, std::byte* page) noexcept {
  for (uint32_t k = 0; k < kPageBytes / kLineBytes; ++k) {
    std::byte* line = page + size_t{k} * kLineBytes;
    if (lines >> k & 1) {
      std::memcpy(line, from, kLineBytes);
      from += kLineBytes;
    } else {
      std::memset(line, 0, kLineBytes);
    }
  }
}

enum class LineHow : uint8_t { plain = 0, non_temporal = 1 };

struct LineRecord {
  uint32_t region;
  uint32_t reserved;
  uint64_t offset;  // in the region, line-aligned
  uint8_t bytes[kLineBytes];
};

// flush: the program wrote back the range (a flush instruction, libpmem's). synced: the kernel wrote back the
// dirty pages of the range (msync, fsync, fdatasync, syncfs, sync, sync_file_range), so a line in it with
// nothing to write back is no redundant write-back of the program's.
enum class WritebackKind : uint8_t { flush = 0, non_temporal = 1, synced = 2 };

struct WritebackRecord {
  uint32_t region;  // kNoRegion: the range is not persistent memory (then `offset` is the address)
  // A write(2)'s (RegionHow::written): the bytes of its last line past its end, where it may end the file.
  uint32_t unwritten_tail;
  uint64_t offset;  // in the region
  uint64_t length;
  uint64_t site;  // return address of the call that wrote back
};

// What made a fence: a fence instruction or a library's drain or persist (fence), or a call of the kernel's
// that synced persistent files, named so that a crash point there reads as the program's own call
// (dsync_write: a write on a descriptor opened O_DSYNC or O_SYNC; directory_sync: fsync or fdatasync of a
// directory, which makes its entries durable and writes back no file's data; other_file_sync: fsync,
// fdatasync or msync of a file that is none of the persistent files, which writes back none of theirs and,
// where a file system journals its metadata, commits their changes of the file system with its own).
enum class FenceCall : uint8_t {
  fence = 0,
  msync,
  fsync,
  fdatasync,
  syncfs,
  sync,
  dsync_write,
  directory_sync,
  other_file_sync
};
inline constexpr FenceCall kLastFenceCall = FenceCall::other_file_sync;
constexpr const char* to_string(FenceCall c) noexcept {
  switch (c) {
    case FenceCall::fence: return "fence";
    case FenceCall::msync: return "msync";
    case FenceCall::fsync: return "fsync";
    case FenceCall::fdatasync: return "fdatasync";
    case FenceCall::syncfs: return "syncfs";
    case FenceCall::sync: return "sync";
    case FenceCall::dsync_write: return "O_DSYNC write";
    case FenceCall::directory_sync: return "directory fsync";
    case FenceCall::other_file_sync: return "another file's sync";
  }
  return "fence";
}

struct FenceRecord {
  uint64_t site;
  uint32_t stack;  // kNoStack when stacks are off
  uint32_t reserved;
};

struct StackRecord {
  uint32_t id;
  uint32_t depth;  // return addresses follow, innermost first
};

struct ModuleRecord {
  uint64_t bias;      // load bias: an address minus it is the address in the object file
  uint32_t segments;  // [begin, end) pairs of absolute addresses follow, then the path
  uint32_t path_bytes;
};

struct UnmapRecord {
  uint32_t region;
  uint32_t reserved;
};

enum class OperationMark : uint8_t { begin = 0, end = 1 };

struct OperationRecord {
  uint64_t site;  // return address of the call that marked it
};

// What a trace's operation records up to some point add up to, over all threads.
struct OperationCounts {
  uint64_t begun = 0, ended = 0;
};

struct ExitRecord {
  int32_t status;
  uint32_t reserved;
};

// exchange: the file at a rename's target, moved to its source (renameat2's RENAME_EXCHANGE); the rename's own
// record follows, and the two are one change.
enum class GoneCall : uint8_t { unlink = 0, rename = 1, link = 2, exchange = 3 };
inline constexpr GoneCall kLastGoneCall = GoneCall::exchange;

struct GoneRecord {
  uint64_t site;  // return address of the call
  uint64_t device, inode;
  // The paths follow, not terminated: the name it has now (a rename's target, a link's new name; 0: none),
  // then the name the call removed or renamed (0: not known, where the file is taken to have one name).
  uint32_t path_bytes;
  uint32_t from_bytes;
};

struct ResizeRecord {
  uint64_t site;  // return address of the call
  uint64_t device, inode;
  uint64_t length;  // the file's new length in bytes
};

// What a sync synced, so that a change of the file system durable only at a sync of what it changed knows
// when it is: a file (its data and length: fsync, fdatasync, msync, an O_DSYNC write), a directory (its
// entries: a file made, removed or renamed there), a file system (syncfs) or every file (sync).
enum class SyncScope : uint8_t { file = 0, directory, file_system, all };
inline constexpr SyncScope kLastSyncScope = SyncScope::all;

struct SyncedRecord {
  uint64_t device, inode;  // file and directory: both; file_system: the device
  uint32_t path_bytes;     // a directory's absolute path follows, not terminated
  uint32_t reserved;
};

// moved: renamed, with all below it, to the path that follows its own.
enum class DirectoryEvent : uint8_t { there = 0, root, made, removed, moved };
inline constexpr DirectoryEvent kLastDirectoryEvent = DirectoryEvent::moved;

struct DirectoryRecord {
  uint32_t path_bytes;  // its absolute path follows, not terminated
  uint32_t to_bytes;    // moved: the absolute path it was moved to follows that, not terminated
};

// Records are padded to 8 bytes.
constexpr uint32_t padded(uint64_t bytes) { return static_cast<uint32_t>((bytes + 7) & ~uint64_t{7}); }

}  // namespace pmlab::crash::exec::trace
