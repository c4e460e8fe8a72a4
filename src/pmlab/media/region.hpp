// Memory a benchmark runs on: plain DRAM (anonymous pages) or a pool's data area. DRAM is a first-class
// medium, so every suite can put the volatile baseline beside the pool in one run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::media {

// dram: the process's anonymous memory, wherever the kernel places it; pool: the run's pool file; numa:
// anonymous memory bound to one NUMA node (a remote socket's DRAM, a CXL expander's CPU-less node).
enum class Kind : uint8_t { dram, pool, numa };
const char* to_string(Kind k) noexcept;
Result<Kind> parse_kind(std::string_view text);

// A medium as a run parameter names it: "dram", "pool" or "numa:N".
struct Medium {
  Kind kind = Kind::dram;
  int node = -1;  // numa: the node
  bool operator==(const Medium&) const = default;
};
Result<Medium> parse_medium(std::string_view text);
// Whether `text` names a NUMA node's memory ("numa:N"), as a run's medium parameter or a record's.
bool names_a_node(std::string_view text) noexcept;
std::string to_string(const Medium& m);

// A view of memory; owns nothing.
struct Region {
  std::byte* base = nullptr;
  size_t size = 0;
  Kind kind = Kind::dram;
  int node = -1;  // numa: the node every page of it was checked to be on
};

// The page size DRAM and node memory ask for. By default the run's media use base pages, as a pool has
// them on tmpfs, so comparisons between them see the same TLB; `huge` (2 MiB transparent huge pages, where
// the kernel grants them) matches a pool a DAX file system maps in 2 MiB pages (`pmlab run --pages huge`),
// or a peer given huge pages too.
enum class Pages : uint8_t { base, huge };
const char* to_string(Pages p) noexcept;
Result<Pages> parse_pages(std::string_view text);

// An anonymous mapping this process owns, in the page size it was asked for: advised before its first
// touch, since the kernel decides a page's size when it faults the page in.
class AnonymousMapping {
 public:
  AnonymousMapping() = default;
  ~AnonymousMapping() { release(); }
  AnonymousMapping(const AnonymousMapping&) = delete;
  AnonymousMapping& operator=(const AnonymousMapping&) = delete;

  // Whether the mapping held now has at least `bytes` in `pages`.
  bool holds(size_t bytes, Pages pages) const noexcept { return bytes <= size_ && pages == pages_; }
  // Drops the mapping held and maps at least `bytes` anew, untouched; `what` names the memory in an error.
  Status map(size_t bytes, Pages pages, const std::string& what);
  void release() noexcept;
  std::byte* base() const noexcept { return base_; }
  size_t size() const noexcept { return size_; }

 private:
  std::byte* base_ = nullptr;
  size_t size_ = 0;
  Pages pages_ = Pages::base;
};

// Anonymous memory, pre-faulted so no page fault lands in a timed region.
class DramBuffer {
 public:
  // Grows to at least `bytes` (keeps the mapping when it is large enough and of the same page kind).
  Status reserve(size_t bytes, Pages pages = Pages::base);
  Region region() const { return {mapping_.base(), mapping_.size(), Kind::dram}; }

 private:
  AnonymousMapping mapping_;
};

// Anonymous memory bound to one NUMA node (mbind MPOL_BIND, strict), pre-faulted, and every page checked
// to be on that node (move_pages' query): a kernel that placed a page elsewhere — the node's memory full, a
// policy it could not apply — fails the reservation instead of measuring another node's memory.
class NodeBuffer {
 public:
  explicit NodeBuffer(int node) : node_(node) {}

  // Grows to at least `bytes` (keeps the mapping when it is large enough and of the same page kind).
  Status reserve(size_t bytes, Pages pages = Pages::base);
  Region region() const { return {mapping_.base(), mapping_.size(), Kind::numa, node_}; }

 private:
  Status bind_and_fault();

  int node_;
  AnonymousMapping mapping_;
};

// The NUMA node each page of [base, base+bytes) is on (move_pages' query), or an error where the kernel
// cannot say (no NUMA support). Unmapped or not-yet-faulted pages count as on no node (-1).
Result<std::vector<int>> nodes_of_pages(const std::byte* base, size_t bytes);

// The mapping that contains `addr`, as /proc/self/smaps gives it: its size, how many of its bytes huge
// pages back (AnonHugePages, ShmemPmdMapped and FilePmdMapped), and its VmFlags ("nh": advised
// MADV_NOHUGEPAGE, "hg": MADV_HUGEPAGE). All empty when no mapping holds `addr`.
struct MappingPages {
  uint64_t bytes = 0;
  uint64_t huge_bytes = 0;
  std::vector<std::string> flags;
  bool has_flag(std::string_view flag) const { return std::find(flags.begin(), flags.end(), flag) != flags.end(); }
};
MappingPages mapping_pages(const void* addr);

// Maps every page of [base, base+bytes) writable in this process's page tables without changing a byte
// (MADV_POPULATE_WRITE; on an older kernel each page's first byte is read and written back). The pool's
// pages exist in the file, but its mapping faults on the first touch of each page in the process: a run's
// numbers would depend on whether an earlier run had touched its pages (docs/checks.md).
void prefault_for_writing(std::byte* base, uint64_t bytes) noexcept;

}  // namespace pmlab::media
