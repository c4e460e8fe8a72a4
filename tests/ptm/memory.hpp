// Test support for the PTMs: memory for a log and a heap with a durability model's persisters, and a
// transaction that dies before it commits.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pmlab/platform/cpu.hpp"
#include "pmlab/ptm/common/durability.hpp"
#include "pmlab/ptm/common/ptm.hpp"

namespace pmlab::ptm {

// 64-byte aligned memory for a log and a heap, with the persisters of a durability model.
class Memory {
 public:
  Memory(uint64_t heap_bytes, int slots, uint64_t slot_bytes, Durability d = Durability::adr, bool logging = true)
      : heap_(heap_bytes / 8 + 8), log_(static_cast<uint64_t>(slots) * slot_bytes / 8 + 8) {
    const persist::Config base{persist::Domain::adr, persist::best_line_flush(platform::CpuFeatures::host()), false,
                               false};
    log_p_ = std::make_unique<persist::Persister>(persist::Persister::create(log_config(d, base)).value());
    data_p_ = std::make_unique<persist::Persister>(persist::Persister::create(data_config(d, base)).value());
    regions_.heap = align(heap_.data());
    regions_.heap_bytes = heap_bytes;
    regions_.log = align(log_.data());
    regions_.log_bytes = static_cast<uint64_t>(slots) * slot_bytes;
    regions_.log_persister = log_p_.get();
    regions_.data_persister = data_p_.get();
    options_.slots = slots;
    options_.slot_bytes = slot_bytes;
    options_.logging = logging;
  }
  const Regions& regions() const { return regions_; }
  const Options& options() const { return options_; }

 private:
  static std::byte* align(uint64_t* p) {
    return reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
  }
  std::vector<uint64_t> heap_, log_;
  std::unique_ptr<persist::Persister> log_p_, data_p_;
  Regions regions_;
  Options options_;
};

struct Abandon {};  // thrown from a transaction body: the process "dies" before commit

}  // namespace pmlab::ptm
