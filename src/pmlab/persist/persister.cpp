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

namespace {

// The record's eight words from byte `from` (a line boundary) of it.
void compose_line(const LineRecord& r, uint64_t from, uint64_t* out) noexcept {
  const uint64_t head_begin = r.prefix_len;
  const uint64_t body_begin = head_begin + 8 * uint64_t{r.word_count};
  const uint64_t end = r.end();
  const auto* prefix = static_cast<const unsigned char*>(r.prefix);
  const auto* body = static_cast<const unsigned char*>(r.body);
  for (uint64_t i = 0; i < kCacheLine / 8; ++i) {
    const uint64_t at = from + 8 * i;
    uint64_t w = 0;
    if (at < head_begin) std::memcpy(&w, prefix + at, 8);
    else if (at < body_begin) w = r.words[(at - head_begin) / 8];
    else if (at < end) std::memcpy(&w, body + (at - body_begin), std::min<uint64_t>(8, end - at));
    out[i] = w;
  }
}

}  // namespace

void Persister::store_record_composed(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                                      uint64_t shape, void* last_line) const noexcept {
  const LineRecord record{.prefix = prefix,
                          .prefix_len = static_cast<uint32_t>(shape & 0xff),
                          .word_count = static_cast<uint32_t>((shape >> 8) & 0xff),
                          .words = {word0, word1},
                          .body = body,
                          .body_len = shape >> 16};
  const uint64_t len = record.line_bytes();
  auto* dst = static_cast<unsigned char*>(line);
  // Lines holding the prefix, the words or the body's edges are composed; the body's whole lines between
  // them are copied straight from it (the copy kernels take any source alignment).
  const uint64_t body_begin = record.prefix_len + 8 * uint64_t{record.word_count};
  const uint64_t inner_begin = (body_begin + kCacheLine - 1) & ~(kCacheLine - 1);
  const uint64_t inner_end = std::max(inner_begin, record.end() & ~(kCacheLine - 1));
  alignas(64) uint64_t words[kCacheLine / 8];
  auto store_composed = [&](uint64_t from) {
    compose_line(record, from, words);
    auto* d = reinterpret_cast<uint64_t*>(dst + from);
    if (nt_enabled_) {
      for (uint64_t i = 0; i < kCacheLine / 8; ++i) isa::movnti(d + i, words[i]);
    } else {
      std::memcpy(d, words, kCacheLine);
    }
  };
  for (uint64_t from = 0; from < inner_begin && from < len; from += kCacheLine) store_composed(from);
  if (inner_begin < inner_end) {
    const auto* src = static_cast<const unsigned char*>(record.body) + (inner_begin - body_begin);
    if (nt_enabled_) nt_copy_(dst + inner_begin, src, inner_end - inner_begin);
    else std::memcpy(dst + inner_begin, src, inner_end - inner_begin);
  }
  for (uint64_t from = inner_end; from < len; from += kCacheLine) store_composed(from);
  if (last_line != nullptr) {
    if (record.end() % kCacheLine != 0) compose_line(record, len - kCacheLine, words);
    else std::memset(words, 0, sizeof words);
    std::memcpy(last_line, words, kCacheLine);
  }
  if (!nt_enabled_) return;
  tls_counters.nt_bytes += len;
  if (observer_ != nullptr) [[unlikely]]
    observer_->on_writeback(line, len, Writeback::nt_store);
}

void Persister::zero_nt(void* dst, size_t len) const noexcept {
  alignas(64) static constexpr unsigned char kZeros[4096] = {};
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t done = 0; done < len; done += sizeof kZeros)
    copy_nt(d + done, kZeros, std::min(sizeof kZeros, len - done));
}

}  // namespace pmlab::persist
