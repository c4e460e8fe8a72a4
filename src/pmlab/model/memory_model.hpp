// The interface a memory device model presents to the benchmark harness (docs/device-model.md).
//
// A model is a persist::Observer: it sees every write-back and fence of the run's Persister. Benchmarks
// whose access stream is known also report the traffic the Persister cannot see (loads that miss the
// CPU caches, stores that will be written back by eviction); with emulation on, the model may delay the
// calling thread to charge the modelled media cost. When no model is attached, RunContext::model() is
// null and a benchmark pays one predictable branch.
#pragma once

#include <cstddef>

#include "pmlab/persist/observer.hpp"
#include "pmlab/record/record.hpp"

namespace pmlab::model {

class MemoryModel : public persist::Observer {
 public:
  // Cache-missing loads of [addr, addr+len).
  virtual void on_read(const void* addr, size_t len) noexcept = 0;
  // Cached stores that reach memory later by eviction rather than by a flush (e.g. an eADR store stream).
  virtual void on_evict(const void* addr, size_t len) noexcept = 0;
  // Forget all state: called before each run's timed region.
  virtual void reset() noexcept = 0;
  // Adds the run's modelled metrics (kind modelled, with the model's name) to the record.
  virtual void add_metrics(record::RunRecord& record) const = 0;
};

}  // namespace pmlab::model
