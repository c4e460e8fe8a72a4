// Memory a benchmark runs on: plain DRAM (anonymous pages) or a pool's data area. DRAM is a first-class
// medium, so every suite can put the volatile baseline beside the pool in one run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::media {

enum class Kind : uint8_t { dram, pool };
const char* to_string(Kind k) noexcept;
Result<Kind> parse_kind(std::string_view text);

// A view of memory; owns nothing.
struct Region {
  std::byte* base = nullptr;
  size_t size = 0;
  Kind kind = Kind::dram;
};

// The page size a DRAM buffer asks for. The run's DRAM medium uses base pages, as the pool does on tmpfs,
// so DRAM-versus-pool comparisons see the same TLB; `huge` (2 MiB transparent huge pages, where the
// kernel grants them) is for comparisons with a peer given huge pages too.
enum class Pages : uint8_t { base, huge };

// Anonymous memory, pre-faulted so no page fault lands in a timed region.
class DramBuffer {
 public:
  DramBuffer() = default;
  ~DramBuffer();
  DramBuffer(const DramBuffer&) = delete;
  DramBuffer& operator=(const DramBuffer&) = delete;

  // Grows to at least `bytes` (keeps the mapping when it is large enough and of the same page kind).
  Status reserve(size_t bytes, Pages pages = Pages::base);
  Region region() const { return {base_, size_, Kind::dram}; }

 private:
  void release() noexcept;

  std::byte* base_ = nullptr;
  size_t size_ = 0;
  Pages pages_ = Pages::base;
};

// Bytes of the mapping that contains `addr` backed by huge pages (AnonHugePages, ShmemPmdMapped and
// FilePmdMapped of /proc/self/smaps); 0 when none or unknown.
uint64_t huge_mapped_bytes(const void* addr);

// Maps every page of [base, base+bytes) writable in this process's page tables without changing a byte
// (MADV_POPULATE_WRITE; on an older kernel each page's first byte is read and written back). The pool's
// pages exist in the file, but its mapping faults on the first touch of each page in the process: a run's
// numbers would depend on whether an earlier run had touched its pages (docs/checks.md).
void prefault_for_writing(std::byte* base, uint64_t bytes) noexcept;

}  // namespace pmlab::media
