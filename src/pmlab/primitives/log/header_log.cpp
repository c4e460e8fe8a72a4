// Header logging ([PMemIO] §3.3.1), the protocol of PMDK's libpmemlog: one size field per lane, written
// after every entry. Consecutive appends persist the same cache line twice in a row, which the media
// punishes ([PMemIO] §2.3); header-dancing avoids it.
#include "pmlab/primitives/log/size_field_log.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace {

class HeaderLog final : public SizeFieldLog {
 public:
  using SizeFieldLog::SizeFieldLog;

 protected:
  void publish(uint32_t lane, uint64_t tail) noexcept override { store_size_field(size_slot(lane, 0), tail); }
  uint64_t published_tail(uint32_t lane) const noexcept override {
    return persist::Persister::load8(size_slot(lane, 0));
  }
};

}  // namespace

std::unique_ptr<Log> make_header_log(std::span<std::byte> region, const persist::Persister& persister,
                                     const Options& options, const Geometry& geometry) {
  return std::make_unique<HeaderLog>(region, persister, options, geometry);
}

}  // namespace pmlab::primitives::log
