// idio.i8_dirty_load: I8, load latency after a dirty cache (PMIdioBench's test_i8). A region the size of
// the nominal LLC is written; under ADR it is then flushed (the cache holds clean lines), under eADR it is
// not (the cache stays full of dirty lines, as it does when eADR makes flushing unnecessary). Then every
// tested line of another, evicted region is loaded once in a random order and each load is timed: a miss
// that must first write back a dirty victim costs more. R5 (flush low-locality data even under eADR)
// rests on this and on I5.
#include <barrier>
#include <memory>

#include "pmlab/bench/case.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/priming.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

uint64_t dirty_bytes() { return std::max<uint64_t>(platform::llc_bytes(), 8ULL << 20); }

void body(RunContext& ctx) {
  const persist::Persister& persister = ctx.persister();
  MemoryModel* model = ctx.model();
  const WriteFn write = write_kernel();
  const size_t threads = static_cast<size_t>(ctx.threads());
  const uint64_t half = dirty_bytes() / threads & ~uint64_t{kSlotBytes - 1};
  const int rounds = ctx.quick() ? 2 : 4;
  std::barrier<> sync(static_cast<std::ptrdiff_t>(threads));
  std::vector<std::unique_ptr<Histogram>> histograms(threads);
  const platform::Clock& clock = platform::Clock::get();
  const uint64_t overhead = clock.from_ns(clock.overhead_ns());

  ctx.run_threads([&](ThreadState& t) {
    const size_t me = static_cast<size_t>(t.index());
    std::byte* dirty = ctx.region().base + 2 * half * me;
    std::byte* loaded = dirty + half;
    auto hist = std::make_unique<Histogram>();
    alignas(64) std::byte source[4096];
    for (size_t i = 0; i < sizeof source; ++i) source[i] = static_cast<std::byte>(i * 7);
    uint64_t sink = 0;
    for (int round = 0; round < rounds; ++round) {
      const auto order = permutation(half / kSlotBytes, 0x8000 + me * 17 + static_cast<uint64_t>(round));
      evict(loaded, half);
      for (uint64_t o = 0; o < half; o += sizeof source) write(dirty + o, source, sizeof source);
      persister.persist(dirty, half);  // adr: flushed, the cache is clean; eadr: only a fence
      if (model != nullptr && !persister.issues_flushes()) model->on_evict(dirty, half);
      sync.arrive_and_wait();
      for (uint32_t slot : order) {
        const std::byte* line = loaded + size_t{slot} * kSlotBytes;
        const uint64_t t0 = platform::Clock::start();
        sink += load_word(line);
        if (model != nullptr) [[unlikely]]
          model->on_read(line, 64);
        const uint64_t t1 = platform::Clock::stop();
        hist->add(t1 - t0 > overhead ? t1 - t0 - overhead : 0);
      }
      sync.arrive_and_wait();
    }
    __asm__ volatile("" : : "r"(sink));
    histograms[me] = std::move(hist);
  });
  Histogram merged;
  for (const auto& h : histograms) merged.merge(*h);
  add_latency_metrics(ctx, merged);
  ctx.metric("dirty_bytes", static_cast<double>(half * threads), "B");
  ctx.metric("rounds", rounds, "count");
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "i8_dirty_load",
    .summary = "I8: load latency after filling the cache with stores, flushed (ADR) or left dirty (eADR)",
    .params = {std_params::medium(), std_params::domain({"adr", "eadr"}), std_params::flush({"auto"}),
               std_params::threads({"1"}, {"1"})},
    .region_bytes =
        [](const Params& p) { return 2 * dirty_bytes() + static_cast<uint64_t>(p.integer("threads")) * 4096; },
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
