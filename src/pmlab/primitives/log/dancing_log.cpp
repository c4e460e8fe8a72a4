// Header logging with dancing size fields ([PMemIO] §3.3.2): N size fields per lane, each on a cache
// line of its own, written round-robin, so an append never persists the line the previous one did.
// Sizes only grow between truncations, so the lane's size is the largest field.
#include <algorithm>

#include "pmlab/primitives/log/size_field_log.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace {

class DancingHeaderLog final : public SizeFieldLog {
 public:
  using SizeFieldLog::SizeFieldLog;

 protected:
  void publish(uint32_t lane, uint64_t tail) noexcept override {
    store_size_field(size_slot(lane, static_cast<uint32_t>(lanes_[lane].appends % geometry_.slots_per_lane)), tail);
  }
  uint64_t published_tail(uint32_t lane) const noexcept override {
    uint64_t tail = 0;
    for (uint32_t slot = 0; slot < geometry_.slots_per_lane; ++slot)
      tail = std::max(tail, persist::Persister::load8(size_slot(lane, slot)));
    return tail;
  }
};

}  // namespace

std::unique_ptr<Log> make_dancing_header_log(std::span<std::byte> region, const persist::Persister& persister,
                                             const Options& options, const Geometry& geometry) {
  return std::make_unique<DancingHeaderLog>(region, persister, options, geometry);
}

}  // namespace pmlab::primitives::log
