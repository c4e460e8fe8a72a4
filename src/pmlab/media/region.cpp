#include "pmlab/media/region.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "pmlab/common/units.hpp"

namespace pmlab::media {

const char* to_string(Kind k) noexcept { return k == Kind::dram ? "dram" : "pool"; }

Result<Kind> parse_kind(std::string_view text) {
  if (text == "dram") return Kind::dram;
  if (text == "pool") return Kind::pool;
  return error(Errc::invalid_argument, "unknown medium '" + std::string(text) + "' (dram, pool)");
}

DramBuffer::~DramBuffer() {
  if (base_ != nullptr) munmap(base_, size_);
}

Status DramBuffer::reserve(size_t bytes) {
  if (bytes <= size_) return Status::success();
  if (base_ != nullptr) {
    munmap(base_, size_);
    base_ = nullptr;
    size_ = 0;
  }
  const size_t rounded = (bytes + 4095) & ~size_t{4095};
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED)
    return error(Errc::no_space, "cannot map " + format_size(rounded) + " of DRAM: " + std::strerror(errno));
  base_ = static_cast<std::byte*>(p);
  size_ = rounded;
  return Status::success();
}

}  // namespace pmlab::media
