// The persistence vocabulary every design in pmlab speaks: flush, fence, persist, non-temporal copy,
// 8-byte atomic store.
//
// A Persister is built once from a Config (as libpmem2 fills a map's flush/drain functions at map time)
// and is then cheap to call: the branch on the instruction is loop-invariant and predicted, the counters
// are thread-local adds, and the hook is one predicted-not-taken test of a pointer. The overhead against
// raw intrinsics is measured by `pmlab run core` (case core.overhead).
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>

#include <immintrin.h>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/persist/counters.hpp"
#include "pmlab/persist/instructions.hpp"
#include "pmlab/persist/line_record.hpp"
#include "pmlab/persist/observer.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::persist {

// Bulk non-temporal copy kernels (x86_64/nt_copy.cpp), one per vector width.
using NtCopyFn = void (*)(void* dst, const void* src, size_t len) noexcept;
// Record kernels compose each line in registers and store it non-temporally (x86_64/nt_copy.cpp).
using NtRecordFn = void (*)(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                            uint64_t shape, void* last_line) noexcept;

class Persister;

// An 8-byte word in persistent memory that threads update atomically (a lock-free design's links and
// counters). Every store and read-modify-write goes through the Persister, so an observer sees it as an
// atomic store (the crash simulator never tears it) and mutation testing can reach it.
class PmWord {
 public:
  PmWord(uint64_t* word, const Persister& persister) noexcept : word_(word), persister_(&persister) {}

  uint64_t load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return std::atomic_ref<uint64_t>(*word_).load(order);
  }
  inline void store(uint64_t value, std::memory_order order = std::memory_order_seq_cst,
                    const std::source_location where = std::source_location::current()) const noexcept;
  inline bool compare_exchange_strong(
      uint64_t& expected, uint64_t desired, std::memory_order order = std::memory_order_seq_cst,
      const std::source_location where = std::source_location::current()) const noexcept;
  inline uint64_t fetch_add(uint64_t delta, std::memory_order order = std::memory_order_seq_cst,
                            const std::source_location where = std::source_location::current()) const noexcept;
  inline uint64_t fetch_or(uint64_t bits, std::memory_order order = std::memory_order_seq_cst,
                           const std::source_location where = std::source_location::current()) const noexcept;
  uint64_t* address() const noexcept { return word_; }

 private:
  uint64_t* word_;
  const Persister* persister_;
};

class Persister {
 public:
  // Fails with Errc::unsupported when the CPU lacks the chosen flush instruction.
  static Result<Persister> create(const Config& config,
                                  const platform::CpuFeatures& cpu = platform::CpuFeatures::host());
  // Domain none: the vocabulary is free (volatile memory). Always succeeds.
  static Persister volatile_memory();

  // Writes back the cache lines covering [addr, addr+len) toward the durability domain. Unordered
  // until fence(). `where` names the design's call site for observers (every call below has it); it
  // costs nothing when none is attached. Always inlined, as fence and persist are: the runtime of
  // `pmlab crash exec` names the function the call's return address lies in.
  [[gnu::always_inline]] void flush(const void* addr, size_t len,
                                    const std::source_location where = std::source_location::current()) const noexcept {
    if (line_flush_ == LineFlush::none || len == 0) return;
    if (observer_ != nullptr) [[unlikely]] {
      flush_observed(addr, len, where);
      return;
    }
    flush_lines(addr, len);
  }

  // Makes every earlier flush and non-temporal store durable (and ordered before later stores).
  [[gnu::always_inline]] void fence(const std::source_location where = std::source_location::current()) const noexcept {
    if (observer_ != nullptr) [[unlikely]] {
      fence_observed(where);
      return;
    }
    fence_now();
  }

  [[gnu::always_inline]] void persist(
      const void* addr, size_t len, const std::source_location where = std::source_location::current()) const noexcept {
    flush(addr, len, where);
    fence(where);
  }

  // Copies with non-temporal stores (cache bypassed), flushing partial lines at the edges. Not fenced.
  // Under domain none it is a plain memcpy: nothing needs to reach memory.
  void copy_nt(void* dst, const void* src, size_t len,
               const std::source_location where = std::source_location::current()) const noexcept;

  // Stores the line at `line` as `word` followed by zeros, non-temporally: for a line that holds one word
  // and nothing else (a commit word, a size field), so no read-for-ownership precedes its store. The
  // aligned word is as atomic as a plain 8-byte store. Not fenced.
  void store_word_line(uint64_t* line, uint64_t word,
                       const std::source_location where = std::source_location::current()) const noexcept {
    const LineRecord record{
        .prefix = nullptr, .prefix_len = 0, .word_count = 1, .words = {word, 0}, .body = nullptr, .body_len = 0};
    store_record_nt(line, record, nullptr, where);
  }

  // Zeroes with non-temporal stores, as copy_nt copies (edges through the cache). Not fenced.
  void zero_nt(void* dst, size_t len,
               const std::source_location where = std::source_location::current()) const noexcept;

  // Stores `record` at `line` (a line boundary) as whole lines with non-temporal stores, so no line is
  // read for ownership or merged with stale cached bytes. Writes the last line as stored to `last_line`
  // (64 bytes, may be null), for the next record's prefix; all zeros when the record ends on a line
  // boundary. Not fenced.
  //
  // With AVX-512BW each line is composed in a register by masked loads. Composing in memory first (then
  // copying) is slower: after a fence, the composing stores wait in the store queue for the drain, and
  // loads across them wait too. Other CPUs compose a record of up to 1 KiB of lines on the stack in
  // 8-byte words and store it in one run of 8-byte non-temporal stores, each loading its word straight
  // from its pending store (larger records: the body's whole lines go straight from the body).
  void store_record_nt(void* line, const LineRecord& record, void* last_line,
                       const std::source_location where = std::source_location::current()) const noexcept {
    assert(reinterpret_cast<uintptr_t>(line) % kCacheLine == 0);
    assert(record.prefix_len < kCacheLine && record.prefix_len % 8 == 0 && record.word_count <= 2);
    // The record's fields go on as arguments on both paths (see record_shape).
    const uint64_t shape = record_shape(record);
    if (observer_ != nullptr) [[unlikely]] {
      store_record_observed(line, record, last_line, where);
      return;
    }
    if (nt_record_ == nullptr || !nt_enabled_) {
      store_record_composed(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line,
                            nt_enabled_);
      return;
    }
    nt_record_(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line);
    tls_counters.nt_bytes += record.line_bytes();
  }

  // Copies and makes durable, the way the flush instruction says: non-temporal for `ntstore`, else
  // store + flush. Then fences.
  void copy_persist(void* dst, const void* src, size_t len,
                    const std::source_location where = std::source_location::current()) const noexcept {
    if (config_.flush == FlushInstruction::ntstore) {
      copy_nt(dst, src, len, where);
    } else {
      std::memcpy(dst, src, len);
      flush(dst, len, where);
    }
    fence(where);
  }

  void fill_persist(void* dst, int byte, size_t len,
                    const std::source_location where = std::source_location::current()) const noexcept {
    std::memset(dst, byte, len);
    persist(dst, len, where);
  }

  // Stores `src` over [dst, dst+len) where a line of it holds other bytes, and writes those lines back the
  // way copy_persist does; a line that holds them already is only read. Not fenced. Returns the lines it
  // wrote back: none, and there is nothing to fence.
  //
  // A line that reads as `src` is durable as `src` only where the region holds what is durable: mapped
  // from a new (zero-filled) file, or after a crash, and stored to since only through write-backs that
  // were fenced. A format runs on such a region, so a new pool's zeros are neither stored again nor
  // written back (`pmlab crash exec` reports each such write-back as redundant).
  size_t store_changed(void* dst, const void* src, size_t len,
                       const std::source_location where = std::source_location::current()) const noexcept;
  // store_changed with zeros for `src`.
  size_t zero_changed(void* dst, size_t len,
                      const std::source_location where = std::source_location::current()) const noexcept;

  // An 8-byte store that no crash can tear: the commit word of every failure-atomic protocol. Designs
  // store commit words through it (never with a plain store): the crash simulator treats only words
  // written this way, or through PmWord, as atomic.
  void store8(uint64_t* word, uint64_t value,
              const std::source_location where = std::source_location::current()) const noexcept {
    assert(reinterpret_cast<uintptr_t>(word) % 8 == 0 && "store8 needs an 8-byte aligned word");
    if (observer_ != nullptr) [[unlikely]] {
      atomic_store_observed(word, value, std::memory_order_release, where);
      return;
    }
    std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_release);
  }
  // An 8-byte store other threads may read while it happens, with no failure atomicity claimed: a word
  // whose torn content recovery repairs (a PTM's in-place data, which its log restores or replays). The
  // crash simulator treats it as a plain store, whose bytes may tear; mutation testing leaves it alone
  // (store8 is the claim it tests).
  void store_shared(uint64_t* word, uint64_t value,
                    const std::source_location where = std::source_location::current()) const noexcept {
    assert(reinterpret_cast<uintptr_t>(word) % 8 == 0 && "store_shared needs an 8-byte aligned word");
    if (observer_ != nullptr) [[unlikely]]
      observer_->before_store(word, 8, where);
    std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_release);
  }
  static uint64_t load8(const uint64_t* word) noexcept {
    return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(word)).load(std::memory_order_acquire);
  }
  // The word at `word`, for atomic updates by concurrent threads (see PmWord).
  PmWord word(uint64_t* word) const noexcept { return PmWord(word, *this); }

  // One round of a spin-wait for another thread's progress: tells the observer (a crash simulator runs
  // threads one at a time and must pass the turn), then pauses the core.
  void spin_wait() const noexcept {
    if (observer_ != nullptr) [[unlikely]]
      observer_->on_wait();
    _mm_pause();
  }

  // Declares [addr, addr+len) volatile by design: the design never makes it durable, and its recovery
  // rebuilds it rather than reading it after a crash (selective persistence: a B+-tree's inner nodes, a
  // list's links). No instruction is issued; the crash simulator neither explores these bytes nor asks
  // recovery to persist them.
  void declare_volatile(const void* addr, size_t len) const noexcept {
    if (observer_ != nullptr) [[unlikely]]
      observer_->on_volatile(addr, len);
  }

  // A Persister of another configuration (a flush or fence elided, another domain for a log) that keeps
  // this one's observer, so the device model, the counters and the crash tracking see its writes as the
  // run's. Under domain none (memory that is not persistent, such as PDRAM's DRAM) nothing reaches a
  // durability domain and no observer is kept.
  Result<Persister> derive(const Config& config) const;

  // Attach before the threads that use this Persister start, detach after they stop. In a process that
  // pmlab's tracing runtime traces, a Persister starts with the runtime's reporter attached
  // (tracing_runtime.hpp), and detach() attaches it again.
  void attach(Observer* observer) noexcept { observer_ = observer; }
  void detach() noexcept;
  Observer* observer() const noexcept { return observer_; }

  const Config& config() const noexcept { return config_; }
  Domain domain() const noexcept { return config_.domain; }
  // Which line flush actually runs ("none" under eADR, domain none or elide_flush).
  const char* line_flush_name() const noexcept;
  const char* nt_kernel_name() const noexcept { return nt_kernel_name_; }
  const char* nt_record_kernel_name() const noexcept { return nt_record_ ? "avx512bw" : "movnti"; }
  bool issues_flushes() const noexcept { return line_flush_ != LineFlush::none; }
  bool issues_fences() const noexcept { return issue_fence_; }

 private:
  friend class PmWord;
  enum class LineFlush : uint8_t { none, clflush, clflushopt, clwb };
  Persister() = default;

  void flush_lines(const void* addr, size_t len) const noexcept {
    uintptr_t line = reinterpret_cast<uintptr_t>(addr) & ~(kCacheLine - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + len;
    const uintptr_t first = line;
    switch (line_flush_) {
      case LineFlush::clwb:
        for (; line < end; line += kCacheLine) isa::clwb(reinterpret_cast<const void*>(line));
        break;
      case LineFlush::clflushopt:
        for (; line < end; line += kCacheLine) isa::clflushopt(reinterpret_cast<const void*>(line));
        break;
      case LineFlush::clflush:
        for (; line < end; line += kCacheLine) isa::clflush(reinterpret_cast<const void*>(line));
        break;
      case LineFlush::none: break;
    }
    const uint64_t lines = (line - first) / kCacheLine;
    tls_counters.flushes += lines;
    tls_counters.flushed_bytes += lines * kCacheLine;
  }
  void fence_now() const noexcept {
    if (issue_fence_) {
      isa::sfence();
      ++tls_counters.fences;
    } else {
      isa::compiler_fence();
    }
  }

  // The observed paths: the observer hears of each call and may mutate it (observer.hpp).
  void flush_observed(const void* addr, size_t len, const std::source_location& where) const noexcept;
  void fence_observed(const std::source_location& where) const noexcept;
  void store_record_observed(void* line, const LineRecord& record, void* last_line,
                             const std::source_location& where) const noexcept;
  void atomic_store_observed(uint64_t* word, uint64_t value, std::memory_order order,
                             const std::source_location& where) const noexcept;
  bool compare_exchange_observed(uint64_t* word, uint64_t& expected, uint64_t desired, std::memory_order order,
                                 const std::source_location& where) const noexcept;
  enum class Rmw : uint8_t { add, bit_or };
  uint64_t rmw_observed(uint64_t* word, Rmw op, uint64_t operand, std::memory_order order,
                        const std::source_location& where) const noexcept;
  // copy_nt's instructions, without the observer.
  void copy_nt_now(void* dst, const void* src, size_t len) const noexcept;
  // store_changed's lines; `src` null stands for zeros.
  size_t write_changed_lines(std::byte* dst, const std::byte* src, size_t len,
                             const std::source_location& where) const noexcept;
  // store_record_nt without a record kernel: with non-temporal stores, or plain stores where nothing
  // needs to reach memory (domain none) or a mutation says so.
  void store_record_composed(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                             uint64_t shape, void* last_line, bool non_temporal) const noexcept;

  Config config_;
  // Under `ntstore` the best line flush the CPU has, for cached stores and the edges of nt copies.
  LineFlush line_flush_ = LineFlush::none;
  bool issue_fence_ = false;
  bool nt_enabled_ = false;
  NtCopyFn nt_copy_ = nullptr;
  NtRecordFn nt_record_ = nullptr;  // null: the portable path in persister.cpp
  const char* nt_kernel_name_ = "memcpy";
  Observer* observer_ = nullptr;
};

inline void PmWord::store(uint64_t value, std::memory_order order, const std::source_location where) const noexcept {
  if (persister_->observer_ != nullptr) [[unlikely]] {
    persister_->atomic_store_observed(word_, value, order, where);
    return;
  }
  std::atomic_ref<uint64_t>(*word_).store(value, order);
}

inline bool PmWord::compare_exchange_strong(uint64_t& expected, uint64_t desired, std::memory_order order,
                                            const std::source_location where) const noexcept {
  if (persister_->observer_ != nullptr) [[unlikely]]
    return persister_->compare_exchange_observed(word_, expected, desired, order, where);
  return std::atomic_ref<uint64_t>(*word_).compare_exchange_strong(expected, desired, order);
}

inline uint64_t PmWord::fetch_add(uint64_t delta, std::memory_order order,
                                  const std::source_location where) const noexcept {
  if (persister_->observer_ != nullptr) [[unlikely]]
    return persister_->rmw_observed(word_, Persister::Rmw::add, delta, order, where);
  return std::atomic_ref<uint64_t>(*word_).fetch_add(delta, order);
}

inline uint64_t PmWord::fetch_or(uint64_t bits, std::memory_order order,
                                 const std::source_location where) const noexcept {
  if (persister_->observer_ != nullptr) [[unlikely]]
    return persister_->rmw_observed(word_, Persister::Rmw::bit_or, bits, order, where);
  return std::atomic_ref<uint64_t>(*word_).fetch_or(bits, order);
}

}  // namespace pmlab::persist
