// The one hook point: everything that moves data toward durability passes through an Observer, if one
// is attached. The crash simulator keeps a durable image from these events; the device model turns them
// into memory-controller traffic; latency emulation delays fences.
//
// Every event names the design's call site (`where`: the file, line and column of its flush, fence,
// persist, non-temporal store or atomic store), so a report can say where something happened and a
// mutation can change one call site and no other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>

namespace pmlab::persist {

enum class Writeback : unsigned char {
  flush,     // cache lines written back by a flush instruction; the range covers whole lines
  nt_store,  // bytes written by non-temporal stores (exact range; edges flushed count here too)
};

// The kinds of persistence call, as a mutation addresses them. A persist() is a flush and a fence at one
// call site; copy_persist() a copy (non-temporal, or stores and a flush) and a fence.
enum class Call : unsigned char {
  flush,         // a line flush (flush, the flush of persist / copy_persist / fill_persist)
  fence,         // a fence (fence, the fence of persist / copy_persist / fill_persist)
  nt_store,      // non-temporal stores (copy_nt, zero_nt, store_record_nt, store_word_line)
  atomic_store,  // an 8-byte atomic store (store8, PmWord::store)
  atomic_rmw,    // an atomic read-modify-write of an 8-byte word (PmWord compare-exchange, fetch-add, exchange)
};
const char* to_string(Call c) noexcept;

// How an observed call is carried out. Only mutation testing (the crash simulator) asks for other than
// `none`; each kind is a bug a design could have at that site.
enum class Mutation : unsigned char {
  none,
  drop,   // a flush or fence is not issued; non-temporal stores become cached stores never written back
  split,  // an 8-byte atomic store becomes two plain 4-byte stores (low half first): it may tear
};
const char* to_string(Mutation m) noexcept;

class Observer {
 public:
  virtual ~Observer() = default;
  // After the instructions ran: the range is on its way to the durability domain, not yet ordered.
  virtual void on_writeback(const void* addr, size_t len, Writeback kind,
                            const std::source_location& where = std::source_location::current()) noexcept = 0;
  // Before the fence runs: every writeback since the previous fence becomes durable at this point.
  // Called for every fence a design asks for, also where the domain issues no instruction.
  virtual void on_fence(const std::source_location& where = std::source_location::current()) noexcept = 0;
  // Before the vocabulary itself stores to [addr, addr+len): an atomic store or read-modify-write, or
  // non-temporal stores (whose "after" is on_writeback). An observer that keeps the region's contents
  // tells the stores it makes apart from the design's plain stores around them.
  virtual void before_store(const void* addr, size_t len, const std::source_location& where) noexcept {
    (void)addr, (void)len, (void)where;
  }
  // After an atomic store or read-modify-write of `size` bytes at `addr` has happened: those bytes
  // changed as one.
  virtual void after_atomic_store(const void* addr, size_t size, const std::source_location& where) noexcept {
    (void)addr, (void)size, (void)where;
  }
  // After a locked read-modify-write (PmWord compare-exchange, fetch-add, fetch-or): on x86 it drains the
  // store buffer, so everything the thread stored is visible to others, and with eADR visible is durable.
  virtual void after_locked_rmw(const std::source_location& where) noexcept { (void)where; }
  // The thread spins waiting for another (Persister::spin_wait): a tool that runs threads one at a time
  // must let the other run.
  virtual void on_wait() noexcept {}
  // [addr, addr+len) is volatile by design (Persister::declare_volatile).
  virtual void on_volatile(const void* addr, size_t len) noexcept { (void)addr, (void)len; }
  // Asked before each observed call is carried out; [addr, addr+len) is what the call covers (empty for a
  // fence).
  virtual Mutation mutation(Call call, const void* addr, size_t len, const std::source_location& where) noexcept {
    (void)call, (void)addr, (void)len, (void)where;
    return Mutation::none;
  }
  // After a split store to `addr` changed its word from `before` to `after`: the observer decides whether
  // the halves made a state the whole store would not have (both halves changed, or bytes that may tear).
  // A mutation that never does is equivalent to the original on this run.
  virtual void after_split_store(const void* addr, uint64_t before, uint64_t after,
                                 const std::source_location& where) noexcept {
    (void)addr, (void)before, (void)after, (void)where;
  }
};

}  // namespace pmlab::persist
