#include "pmlab/primitives/page/dram_page.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace pmlab::primitives::page {

Status check_page_size(uint64_t bytes) {
  if (bytes < kMinPageBytes || bytes > kMaxPageBytes || !std::has_single_bit(bytes))
    return error(Errc::invalid_argument,
                 "page size " + std::to_string(bytes) + " is not a power of two from 4096 to 65536 bytes");
  return Status::success();
}

void DramPage::Free::operator()(std::byte* p) const noexcept { std::free(p); }

DramPage::DramPage(uint32_t bytes)
    : data_(static_cast<std::byte*>(std::aligned_alloc(kLineBytes, bytes))), size_(bytes) {
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, bytes);
}

Status DramPage::write(size_t offset, const void* src, size_t len) {
  if (offset > size_ || len > size_ - offset)
    return error(Errc::invalid_argument, "write of " + std::to_string(len) + " bytes at offset " +
                                             std::to_string(offset) + " leaves the " + std::to_string(size_) +
                                             "-byte page");
  if (len == 0) return Status::success();
  std::memcpy(data_.get() + offset, src, len);
  for (size_t line = offset / kLineBytes; line <= (offset + len - 1) / kLineBytes; ++line)
    dirty_.mark(static_cast<uint32_t>(line));
  return Status::success();
}

}  // namespace pmlab::primitives::page
