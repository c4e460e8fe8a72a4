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

class Persister {
 public:
  // Fails with Errc::unsupported when the CPU lacks the chosen flush instruction.
  static Result<Persister> create(const Config& config,
                                  const platform::CpuFeatures& cpu = platform::CpuFeatures::host());
  // Domain none: the vocabulary is free (volatile memory). Always succeeds.
  static Persister volatile_memory();

  // Writes back the cache lines covering [addr, addr+len) toward the durability domain. Unordered
  // until fence().
  void flush(const void* addr, size_t len) const noexcept {
    if (line_flush_ == LineFlush::none || len == 0) return;
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
      case LineFlush::none:
        break;
    }
    const uint64_t lines = (line - first) / kCacheLine;
    tls_counters.flushes += lines;
    tls_counters.flushed_bytes += lines * kCacheLine;
    if (observer_ != nullptr) [[unlikely]]
      observer_->on_writeback(reinterpret_cast<const void*>(first), line - first, Writeback::flush);
  }

  // Makes every earlier flush and non-temporal store durable (and ordered before later stores).
  // `where` names the design's call site for observers; it costs nothing when none is attached.
  void fence(const std::source_location where = std::source_location::current()) const noexcept {
    if (observer_ != nullptr) [[unlikely]]
      observer_->on_fence_at(where);
    if (issue_fence_) {
      isa::sfence();
      ++tls_counters.fences;
    } else {
      isa::compiler_fence();
    }
  }

  void persist(const void* addr, size_t len,
               const std::source_location where = std::source_location::current()) const noexcept {
    flush(addr, len);
    fence(where);
  }

  // Copies with non-temporal stores (cache bypassed), flushing partial lines at the edges. Not fenced.
  // Under domain none it is a plain memcpy: nothing needs to reach memory.
  void copy_nt(void* dst, const void* src, size_t len) const noexcept;

  // Stores the line at `line` as `word` followed by zeros, non-temporally: for a line that holds one word
  // and nothing else (a commit word, a size field), so no read-for-ownership precedes its store. The
  // aligned word is as atomic as a plain 8-byte store. Not fenced.
  void store_word_line(uint64_t* line, uint64_t word) const noexcept {
    const LineRecord record{
        .prefix = nullptr, .prefix_len = 0, .word_count = 1, .words = {word, 0}, .body = nullptr, .body_len = 0};
    store_record_nt(line, record, nullptr);
  }

  // Zeroes with non-temporal stores, as copy_nt copies (edges through the cache). Not fenced.
  void zero_nt(void* dst, size_t len) const noexcept;

  // Stores `record` at `line` (a line boundary) as whole lines with non-temporal stores, so no line is
  // read for ownership or merged with stale cached bytes. Writes the last line as stored to `last_line`
  // (64 bytes, may be null), for the next record's prefix; all zeros when the record ends on a line
  // boundary. Not fenced.
  //
  // With AVX-512BW each line is composed in a register by masked loads. Composing in memory first (then
  // copying) is slower: after a fence, the composing stores wait in the store queue for the drain, and
  // loads across them wait too. On this Zen 4 VM the register version took a padded 128 B zero-log
  // append from ~151 to ~116 ns (the one-barrier bound is ~108 ns). Other CPUs compose a record of up to
  // 1 KiB of lines on the stack in 8-byte words and store it in one run of 8-byte non-temporal stores,
  // each loading its word straight from its pending store (larger records: the body's whole lines go
  // straight from the body).
  void store_record_nt(void* line, const LineRecord& record, void* last_line) const noexcept {
    assert(reinterpret_cast<uintptr_t>(line) % kCacheLine == 0);
    assert(record.prefix_len < kCacheLine && record.prefix_len % 8 == 0 && record.word_count <= 2);
    // The record's fields go on as arguments on both paths (see record_shape).
    const uint64_t shape = record_shape(record);
    if (nt_record_ == nullptr || !nt_enabled_) {
      store_record_composed(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line);
      return;
    }
    nt_record_(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line);
    tls_counters.nt_bytes += record.line_bytes();
    if (observer_ != nullptr) [[unlikely]]
      observer_->on_writeback(line, record.line_bytes(), Writeback::nt_store);
  }

  // Copies and makes durable, the way the flush instruction says: non-temporal for `ntstore`, else
  // store + flush. Then fences.
  void copy_persist(void* dst, const void* src, size_t len,
                    const std::source_location where = std::source_location::current()) const noexcept {
    if (config_.flush == FlushInstruction::ntstore) {
      copy_nt(dst, src, len);
    } else {
      std::memcpy(dst, src, len);
      flush(dst, len);
    }
    fence(where);
  }

  void fill_persist(void* dst, int byte, size_t len,
                    const std::source_location where = std::source_location::current()) const noexcept {
    std::memset(dst, byte, len);
    persist(dst, len, where);
  }

  // An 8-byte store that no crash can tear: the commit word of every failure-atomic protocol.
  static void store8(uint64_t* word, uint64_t value) noexcept {
    assert(reinterpret_cast<uintptr_t>(word) % 8 == 0 && "store8 needs an 8-byte aligned word");
    std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_release);
  }
  static uint64_t load8(const uint64_t* word) noexcept {
    return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(word)).load(std::memory_order_acquire);
  }

  // Attach before the threads that use this Persister start, detach after they stop.
  void attach(Observer* observer) noexcept { observer_ = observer; }
  void detach() noexcept { observer_ = nullptr; }
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
  enum class LineFlush : uint8_t { none, clflush, clflushopt, clwb };
  Persister() = default;
  // store_record_nt without a record kernel (or with plain stores where nothing needs to reach memory).
  void store_record_composed(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                             uint64_t shape, void* last_line) const noexcept;

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

}  // namespace pmlab::persist
