// The public Persister (pmlab/persist.hpp) over the engine's: every call goes on with the caller's own call
// site, so a design written against the public vocabulary is observed, counted and crash-tested exactly as
// pmlab's own designs are, and runs the same instructions in production. Used by a pmlab::Pool and by the
// subjects `pmlab crash --load` loads.
#pragma once

#include <pmlab/persist.hpp>

#include "pmlab/persist/persister.hpp"
#include "pmlab/persist/tracing_runtime.hpp"

namespace pmlab::persist {

class PublicPersister final : public v0::Persister {
 public:
  explicit PublicPersister(const persist::Persister& p) noexcept : p_(&p) {}
  // The calls a traced process reports to pmlab's runtime name the design's instruction, the return address
  // into it, rather than this forwarder's (tracing_runtime.hpp).
  void flush(const void* addr, size_t len, Site where) const noexcept override {
    as_callers(__builtin_return_address(0), [&] { p_->flush(addr, len, where); });
  }
  void fence(Site where) const noexcept override {
    as_callers(__builtin_return_address(0), [&] { p_->fence(where); });
  }
  void store8(uint64_t* word, uint64_t value, Site where) const noexcept override { p_->store8(word, value, where); }
  void copy_nt(void* dst, const void* src, size_t len, Site where) const noexcept override {
    as_callers(__builtin_return_address(0), [&] { p_->copy_nt(dst, src, len, where); });
  }
  bool compare_exchange(uint64_t* word, uint64_t& expected, uint64_t desired, Site where) const noexcept override {
    return p_->word(word).compare_exchange_strong(expected, desired, std::memory_order_seq_cst, where);
  }
  uint64_t fetch_add(uint64_t* word, uint64_t delta, Site where) const noexcept override {
    return p_->word(word).fetch_add(delta, std::memory_order_seq_cst, where);
  }
  void declare_volatile(const void* addr, size_t len) const noexcept override { p_->declare_volatile(addr, len); }
  void spin_wait() const noexcept override { p_->spin_wait(); }
  v0::Domain domain() const noexcept override {
    return p_->domain() == persist::Domain::eadr ? v0::Domain::eadr : v0::Domain::adr;
  }

 private:
  template <class Call>
  void as_callers(const void* site, const Call& call) const noexcept {
    if (p_->observer() == nullptr) [[likely]] {
      call();
      return;
    }
    EntryCallSite entry(site);
    call();
  }

  const persist::Persister* p_;  // the engine's: the base class's name is the public one here
};

}  // namespace pmlab::persist
