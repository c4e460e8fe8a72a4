// Anonymous memory for a crash image: page-aligned, at an address of its own.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace pmlab::crash {

class ImageMapping {
 public:
  static constexpr size_t kPage = 4096;
  static size_t round_pages(size_t n) { return (n + kPage - 1) & ~(kPage - 1); }

  explicit ImageMapping(size_t size) : size_(round_pages(size == 0 ? 1 : size)) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  ~ImageMapping() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  ImageMapping(const ImageMapping&) = delete;
  ImageMapping& operator=(const ImageMapping&) = delete;

  std::byte* base() const noexcept { return base_; }
  // Back to zero-filled pages at the same address (a fresh mapping, as a new run finds it).
  void zero() const noexcept { madvise(base_, size_, MADV_DONTNEED); }

 private:
  size_t size_;
  std::byte* base_;
};

}  // namespace pmlab::crash
