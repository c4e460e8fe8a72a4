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

// Anonymous memory, pre-faulted so no page fault lands in a timed region.
class DramBuffer {
 public:
  DramBuffer() = default;
  ~DramBuffer();
  DramBuffer(const DramBuffer&) = delete;
  DramBuffer& operator=(const DramBuffer&) = delete;

  // Grows to at least `bytes` (keeps the mapping when it is large enough).
  Status reserve(size_t bytes);
  Region region() const { return {base_, size_, Kind::dram}; }

 private:
  std::byte* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pmlab::media
