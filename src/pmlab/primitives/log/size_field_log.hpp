// What header and header-dancing share: the entry is made durable first, then the lane's new size is
// published in a size field (libpmemlog's protocol, [PMemIO] §3.3.1 "Header"). Recovery trusts the size
// field and never scans past it, so an entry whose size was not published does not exist.
#pragma once

#include "pmlab/primitives/log/log.hpp"

namespace pmlab::primitives::log {

class SizeFieldLog : public Log {
 public:
  using Log::Log;

  Result<uint64_t> append(uint32_t lane, const void* payload, size_t len) noexcept final;

 protected:
  // Stores the lane's new size in a size field and writes it back (not fenced).
  virtual void publish(uint32_t lane, uint64_t tail) noexcept = 0;
  // The lane's size as its size fields say.
  virtual uint64_t published_tail(uint32_t lane) const noexcept = 0;

  Status recover_lane(uint32_t lane, bool repair) final;
  void reset_lane(uint32_t lane) final;
};

}  // namespace pmlab::primitives::log
