#include "pmlab/persist/persister.hpp"

#include <algorithm>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/persist/tracing_runtime.hpp"
#include "pmlab/persist/x86_64/nt_copy.hpp"

namespace pmlab::persist {

Result<Persister> Persister::create(const Config& config, const platform::CpuFeatures& cpu) {
  PMLAB_TRY(check_supported(config.flush, cpu));
  Persister p;
  p.config_ = config;

  auto line_flush_of = [](FlushInstruction f) {
    switch (f) {
      case FlushInstruction::clflush: return LineFlush::clflush;
      case FlushInstruction::clflushopt: return LineFlush::clflushopt;
      case FlushInstruction::clwb: return LineFlush::clwb;
      case FlushInstruction::ntstore: break;
    }
    return LineFlush::clflush;
  };
  // Cached stores under `ntstore` still need a line flush: use the best the CPU has.
  const FlushInstruction for_lines = config.flush == FlushInstruction::ntstore ? best_line_flush(cpu) : config.flush;
  p.line_flush_ = (config.domain == Domain::adr && !config.elide_flush) ? line_flush_of(for_lines) : LineFlush::none;
  p.issue_fence_ = config.domain != Domain::none && !config.elide_fence;
  p.nt_enabled_ = config.domain != Domain::none;

  if (cpu.avx512bw) p.nt_record_ = x86_64::nt_record_avx512bw;
  if (cpu.avx512f) {
    p.nt_copy_ = x86_64::nt_copy_avx512;
    p.nt_kernel_name_ = "avx512";
  } else if (cpu.avx2) {
    p.nt_copy_ = x86_64::nt_copy_avx2;
    p.nt_kernel_name_ = "avx2";
  } else {
    p.nt_copy_ = x86_64::nt_copy_sse2;
    p.nt_kernel_name_ = "sse2";
  }
  if (config.domain != Domain::none) p.observer_ = tracing_runtime_observer();
  return p;
}

Persister Persister::volatile_memory() {
  Persister p;
  p.config_.domain = Domain::none;
  p.nt_copy_ = x86_64::nt_copy_sse2;
  return p;
}

const char* Persister::line_flush_name() const noexcept {
  switch (line_flush_) {
    case LineFlush::none: return "none";
    case LineFlush::clflush: return "clflush";
    case LineFlush::clflushopt: return "clflushopt";
    case LineFlush::clwb: return "clwb";
  }
  return "?";
}

void Persister::copy_nt(void* dst, const void* src, size_t len, const std::source_location where) const noexcept {
  if (!nt_enabled_ || len == 0) {
    std::memcpy(dst, src, len);
    return;
  }
  if (observer_ != nullptr) [[unlikely]] {
    tls_observed_call_site = observed_call_site(__builtin_return_address(0));
    if (observer_->mutation(Call::nt_store, dst, len, where) == Mutation::drop) {
      std::memcpy(dst, src, len);  // cached stores, never written back
      return;
    }
    observer_->before_store(dst, len, where);
    copy_nt_now(dst, src, len);
    observer_->on_writeback(dst, len, Writeback::nt_store, where);
    return;
  }
  copy_nt_now(dst, src, len);
}

void Persister::copy_nt_now(void* dst, const void* src, size_t len) const noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(d);
  const uintptr_t end = begin + len;
  const uintptr_t body_begin = (begin + kCacheLine - 1) & ~(kCacheLine - 1);
  const uintptr_t body_end = end & ~(kCacheLine - 1);

  // Partial lines at the edges go through the cache and, under ADR, are flushed: a non-temporal store
  // of part of a line would merge with stale cached bytes.
  auto edge = [&](uintptr_t from, uintptr_t to) {
    if (from >= to) return;
    std::memcpy(reinterpret_cast<void*>(from), s + (from - begin), to - from);
    if (line_flush_ != LineFlush::none) flush_lines(reinterpret_cast<void*>(from), 1);  // eADR: the cache is durable
  };

  if (body_begin >= body_end) {  // no whole line inside: at most two partial lines
    const uintptr_t split = std::min(end, body_begin);
    edge(begin, split);
    edge(split, end);
  } else {
    edge(begin, body_begin);
    nt_copy_(reinterpret_cast<void*>(body_begin), s + (body_begin - begin), body_end - body_begin);
    tls_counters.nt_bytes += body_end - body_begin;
    edge(body_end, end);
  }
}

void Persister::detach() noexcept { observer_ = config_.domain != Domain::none ? tracing_runtime_observer() : nullptr; }

Result<Persister> Persister::derive(const Config& config) const {
  auto p = create(config);
  if (p && config.domain != Domain::none) p->observer_ = observer_;
  return p;
}

void Persister::flush_observed(const void* addr, size_t len, const std::source_location& where) const noexcept {
  tls_observed_call_site = observed_call_site(__builtin_return_address(0));
  if (observer_->mutation(Call::flush, addr, len, where) == Mutation::drop) return;
  flush_lines(addr, len);
  const uintptr_t first = reinterpret_cast<uintptr_t>(addr) & ~(kCacheLine - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + len + kCacheLine - 1) & ~(kCacheLine - 1);
  observer_->on_writeback(reinterpret_cast<const void*>(first), end - first, Writeback::flush, where);
}

void Persister::fence_observed(const std::source_location& where) const noexcept {
  tls_observed_call_site = observed_call_site(__builtin_return_address(0));
  if (observer_->mutation(Call::fence, nullptr, 0, where) == Mutation::drop) return;
  observer_->on_fence(where);
  fence_now();
}

void Persister::store_record_observed(void* line, const LineRecord& record, void* last_line,
                                      const std::source_location& where) const noexcept {
  tls_observed_call_site = observed_call_site(__builtin_return_address(0));
  const uint64_t shape = record_shape(record);
  const bool written_back =
      nt_enabled_ && observer_->mutation(Call::nt_store, line, record.line_bytes(), where) != Mutation::drop;
  if (written_back) observer_->before_store(line, record.line_bytes(), where);
  if (!written_back || nt_record_ == nullptr) {
    store_record_composed(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line,
                          written_back);
  } else {
    nt_record_(line, record.prefix, record.words[0], record.words[1], record.body, shape, last_line);
    tls_counters.nt_bytes += record.line_bytes();
  }
  if (written_back) observer_->on_writeback(line, record.line_bytes(), Writeback::nt_store, where);
}

void Persister::atomic_store_observed(uint64_t* word, uint64_t value, std::memory_order order,
                                      const std::source_location& where) const noexcept {
  if (observer_->mutation(Call::atomic_store, word, 8, where) == Mutation::split) {
    const uint64_t before = std::atomic_ref<uint64_t>(*word).load(std::memory_order_relaxed);
    // Plain stores, as a design that forgot store8 would make: the observer sees the word between the
    // halves, and nothing makes its bytes atomic.
    auto* half = reinterpret_cast<uint32_t*>(word);
    for (int i = 0; i < 2; ++i) {
      observer_->before_store(half + i, 4, where);
      std::atomic_ref<uint32_t>(half[i]).store(static_cast<uint32_t>(value >> (32 * i)), order);
    }
    observer_->after_split_store(word, before, value, where);
    return;
  }
  observer_->before_store(word, 8, where);
  std::atomic_ref<uint64_t>(*word).store(value, order);
  observer_->after_atomic_store(word, 8, where);
}

bool Persister::compare_exchange_observed(uint64_t* word, uint64_t& expected, uint64_t desired, std::memory_order order,
                                          const std::source_location& where) const noexcept {
  (void)observer_->mutation(Call::atomic_rmw, word, 8, where);  // heard; a read-modify-write is never mutated
  observer_->before_store(word, 8, where);
  const bool swapped = std::atomic_ref<uint64_t>(*word).compare_exchange_strong(expected, desired, order);
  observer_->after_atomic_store(word, 8, where);
  observer_->after_locked_rmw(where);  // a failed compare-exchange is locked too
  return swapped;
}

uint64_t Persister::rmw_observed(uint64_t* word, Rmw op, uint64_t operand, std::memory_order order,
                                 const std::source_location& where) const noexcept {
  (void)observer_->mutation(Call::atomic_rmw, word, 8, where);
  observer_->before_store(word, 8, where);
  std::atomic_ref<uint64_t> ref(*word);
  const uint64_t old = op == Rmw::add ? ref.fetch_add(operand, order) : ref.fetch_or(operand, order);
  observer_->after_atomic_store(word, 8, where);
  observer_->after_locked_rmw(where);
  return old;
}

namespace {

// Word `at` (a multiple of 8) of the record.
inline uint64_t record_word(const LineRecord& r, uint64_t at) noexcept {
  const uint64_t head_begin = r.prefix_len;
  const uint64_t body_begin = head_begin + 8 * uint64_t{r.word_count};
  uint64_t w = 0;
  if (at < head_begin) {
    std::memcpy(&w, static_cast<const unsigned char*>(r.prefix) + at, 8);
  } else if (at < body_begin) {
    w = r.words[(at - head_begin) / 8];
  } else if (at + 8 <= r.end()) {
    std::memcpy(&w, static_cast<const unsigned char*>(r.body) + (at - body_begin), 8);
  } else if (at < r.end()) {
    // The body's last, partial word, assembled in a register: a variable-length copy went through a
    // stack temporary, and its 8-byte reload waited for the previous fence's drain.
    const auto* tail = static_cast<const unsigned char*>(r.body) + (at - body_begin);
    for (uint64_t k = 0; k < r.end() - at; ++k) w |= uint64_t{tail[k]} << (8 * k);
  }
  return w;
}

// Records up to this many bytes of lines are composed whole, then stored in one run.
constexpr uint64_t kComposedBytes = 1024;

}  // namespace

void Persister::store_record_composed(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                                      uint64_t shape, void* last_line, bool non_temporal) const noexcept {
  const LineRecord record = unpack_record(prefix, word0, word1, body, shape);
  const uint64_t len = record.line_bytes();
  auto* dst = static_cast<unsigned char*>(line);
  // Lines are composed on the stack in 8-byte words, then stored with 8-byte non-temporal stores in one
  // run, each loading its word straight from its pending store. A run of streaming stores with other
  // work between them, or a wider load across several pending stores, waits longer for the previous
  // fence's drain (docs/primitives.md, "Stores").
  alignas(64) uint64_t composed[kComposedBytes / 8];
  auto compose = [&](uint64_t from, uint64_t bytes, uint64_t* out) {
    for (uint64_t i = 0; i < bytes / 8; ++i) out[i] = record_word(record, from + 8 * i);
  };
  auto store = [&](uint64_t from, const uint64_t* words, uint64_t bytes) {
    auto* d = reinterpret_cast<uint64_t*>(dst + from);
    if (non_temporal) {
      for (uint64_t i = 0; i < bytes / 8; ++i) isa::movnti(d + i, words[i]);
    } else {
      for (uint64_t i = 0; i < bytes / 8; ++i) std::memcpy(d + i, words + i, 8);
    }
  };
  const uint64_t* last_words = nullptr;  // the composed last line, when it is partial
  if (len <= kComposedBytes) {
    compose(0, len, composed);
    store(0, composed, len);
    last_words = composed + (len - kCacheLine) / 8;
  } else {
    // Larger records: the body's whole lines go straight from it (the copy kernels take any source
    // alignment); only the lines before and after them are composed.
    const uint64_t body_begin = record.prefix_len + 8 * uint64_t{record.word_count};
    const uint64_t inner_begin = (body_begin + kCacheLine - 1) & ~(kCacheLine - 1);
    const uint64_t inner_end = record.end() & ~(kCacheLine - 1);
    const auto* src = static_cast<const unsigned char*>(record.body) + (inner_begin - body_begin);
    if (non_temporal) nt_copy_(dst + inner_begin, src, inner_end - inner_begin);
    else std::memcpy(dst + inner_begin, src, inner_end - inner_begin);
    compose(0, inner_begin, composed);
    store(0, composed, inner_begin);
    if (inner_end < len) {
      last_words = composed + inner_begin / 8;
      compose(inner_end, kCacheLine, composed + inner_begin / 8);
      store(inner_end, last_words, kCacheLine);
    }
  }
  if (last_line != nullptr) {
    auto* last = static_cast<unsigned char*>(last_line);
    if (record.end() % kCacheLine == 0) std::memset(last, 0, kCacheLine);
    else
      for (uint64_t i = 0; i < kCacheLine / 8; ++i) std::memcpy(last + 8 * i, last_words + i, 8);
  }
  if (non_temporal) tls_counters.nt_bytes += len;
}

void Persister::zero_nt(void* dst, size_t len, const std::source_location where) const noexcept {
  alignas(64) static constexpr unsigned char kZeros[4096] = {};
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t done = 0; done < len; done += sizeof kZeros)
    copy_nt(d + done, kZeros, std::min(sizeof kZeros, len - done), where);
}

size_t Persister::store_changed(void* dst, const void* src, size_t len,
                                const std::source_location where) const noexcept {
  // The runtime of `pmlab crash exec` names the design that called, not this function.
  const EntryCallSite site(__builtin_return_address(0));
  return write_changed_lines(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), len, where);
}

size_t Persister::zero_changed(void* dst, size_t len, const std::source_location where) const noexcept {
  const EntryCallSite site(__builtin_return_address(0));
  return write_changed_lines(static_cast<std::byte*>(dst), nullptr, len, where);
}

namespace {
bool all_zero(const std::byte* p, size_t n) noexcept {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; ++i) acc |= static_cast<uint64_t>(p[i]);
  return acc == 0;
}
}  // namespace

size_t Persister::write_changed_lines(std::byte* dst, const std::byte* src, size_t len,
                                      const std::source_location& where) const noexcept {
  // Consecutive lines that differ are stored and written back as one run: one call for a region that
  // differs throughout.
  size_t lines = 0;
  size_t run = 0;  // where the run of differing lines starts, in [0, at)
  bool in_run = false;
  auto write_run = [&](size_t end) {
    std::byte* d = dst + run;
    const size_t n = end - run;
    if (config_.flush == FlushInstruction::ntstore) {
      if (src != nullptr) copy_nt(d, src + run, n, where);
      else zero_nt(d, n, where);
    } else {
      if (src != nullptr) std::memcpy(d, src + run, n);
      else std::memset(d, 0, n);
      flush(d, n, where);
    }
  };
  for (size_t at = 0; at < len;) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(dst + at);
    const size_t next = std::min(len, at + (kCacheLine - address % kCacheLine));
    const bool differs =
        src != nullptr ? std::memcmp(dst + at, src + at, next - at) != 0 : !all_zero(dst + at, next - at);
    if (differs) {
      ++lines;
      if (!in_run) run = at, in_run = true;
    } else if (in_run) {
      write_run(at);
      in_run = false;
    }
    at = next;
  }
  if (in_run) write_run(len);
  return lines;
}

namespace {
constexpr auto kCalls = enum_names<Call>("persister call", {{Call::flush, "flush"},
                                                            {Call::fence, "fence"},
                                                            {Call::nt_store, "nt_store"},
                                                            {Call::atomic_store, "atomic_store"},
                                                            {Call::atomic_rmw, "atomic_rmw"}});
constexpr auto kMutations =
    enum_names<Mutation>("mutation", {{Mutation::none, "none"}, {Mutation::drop, "drop"}, {Mutation::split, "split"}});
}  // namespace

const char* to_string(Call c) noexcept { return kCalls.name(c); }
const char* to_string(Mutation m) noexcept { return kMutations.name(m); }

}  // namespace pmlab::persist
