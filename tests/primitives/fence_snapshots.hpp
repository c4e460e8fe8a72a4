// Crash states made by hand: a copy of a region at every fence a design issues. Between two fences any
// subset of the cache lines written since may have reached the media.
#pragma once

#include <span>
#include <vector>

#include "pmlab/persist/observer.hpp"

namespace pmlab::testing {

class FenceSnapshots final : public persist::Observer {
 public:
  explicit FenceSnapshots(std::span<std::byte> region) : region_(region) {}
  void on_writeback(const void*, size_t, persist::Writeback, const std::source_location&) noexcept override {}
  void on_fence(const std::source_location&) noexcept override {
    snapshots.emplace_back(region_.begin(), region_.end());
  }
  std::vector<std::vector<std::byte>> snapshots;

 private:
  std::span<std::byte> region_;
};

}  // namespace pmlab::testing
