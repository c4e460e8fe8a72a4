#include "pmlab/persist/persister.hpp"

#include <algorithm>

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
  const FlushInstruction for_lines =
      config.flush == FlushInstruction::ntstore ? best_line_flush(cpu) : config.flush;
  p.line_flush_ = (config.domain == Domain::adr && !config.elide_flush) ? line_flush_of(for_lines) : LineFlush::none;
  p.issue_fence_ = config.domain != Domain::none && !config.elide_fence;
  p.nt_enabled_ = config.domain != Domain::none;

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

void Persister::copy_nt(void* dst, const void* src, size_t len) const noexcept {
  if (!nt_enabled_ || len == 0) {
    std::memcpy(dst, src, len);
    return;
  }
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
    if (line_flush_ == LineFlush::none) return;  // eADR: the cache is durable
    const uintptr_t line = from & ~(kCacheLine - 1);
    switch (line_flush_) {
      case LineFlush::clwb: isa::clwb(reinterpret_cast<void*>(line)); break;
      case LineFlush::clflushopt: isa::clflushopt(reinterpret_cast<void*>(line)); break;
      default: isa::clflush(reinterpret_cast<void*>(line)); break;
    }
    ++tls_counters.flushes;
    tls_counters.flushed_bytes += kCacheLine;
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
  if (observer_ != nullptr) [[unlikely]]
    observer_->on_writeback(dst, len, Writeback::nt_store);
}

void Persister::zero_nt(void* dst, size_t len) const noexcept {
  alignas(64) static constexpr unsigned char kZeros[4096] = {};
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t done = 0; done < len; done += sizeof kZeros)
    copy_nt(d + done, kZeros, std::min(sizeof kZeros, len - done));
}

}  // namespace pmlab::persist
