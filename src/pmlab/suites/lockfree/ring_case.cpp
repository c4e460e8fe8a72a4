// lockfree.ring: the ring buffers of [PMIdioBench] §6.3. Every thread alternates a push and a pop (50/50) on a
// ring prefilled to half its slots, so no operation waits for room or data unless another thread is
// mid-operation on the same slot. Push and pop latencies are kept apart ([PMIdioBench] Figure 16(a)); with
// slot_flush on, slot data is written back with clwb even under eADR (Figure 15, recommendation R5).
#include <algorithm>
#include <barrier>
#include <cstring>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/lockfree/ring/ring_buffer.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/suites/lockfree/published.hpp"
#include "pmlab/suites/lockfree/timed_ops.hpp"

namespace pmlab::suites::lockfree {
namespace {

using namespace bench;
using pmlab::lockfree::RingBuffer;
using pmlab::lockfree::RingDesign;
constexpr int kMaxThreads = 64;

uint64_t region_bytes(const Params& p) {
  return RingBuffer::bytes_needed(static_cast<uint32_t>(p.size("slots")), static_cast<uint32_t>(p.size("slot")),
                                  kMaxThreads);
}

std::optional<std::string> redundant(const Params& p) {
  const auto d = pmlab::lockfree::parse_ring_design(p.text("design"));
  if (!d) return std::nullopt;
  if (auto why = unclaimed_domain(p, pmlab::lockfree::claimed_domains(*d))) return why;
  if (p.flag("slot_flush") && !persist::caches_are_durable(p.domain()))
    return std::string("slot_flush only changes eADR runs");
  return other_medium(p, *d == RingDesign::volatile_ring);
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const RingDesign design = *pmlab::lockfree::parse_ring_design(p.text("design"));
  const uint32_t slots = static_cast<uint32_t>(p.size("slots"));
  const uint32_t slot_bytes = static_cast<uint32_t>(p.size("slot"));
  if ((slots & (slots - 1)) != 0) ctx.fail("slots must be a power of two");
  const bool flush_slots = p.flag("slot_flush");
  RingBuffer ring(design, ctx.region().base, ctx.region().size, ctx.persister());
  if (Status s = ring.format(slots, slot_bytes, {flush_slots, ctx.threads()}); !s) ctx.fail(s.message());

  std::vector<std::byte> data(slot_bytes);
  for (uint32_t i = 0; i < slot_bytes; ++i) data[i] = static_cast<std::byte>(i * 7 + 1);
  for (uint32_t i = 0; i < slots / 2; ++i) ring.push(0, data.data());  // prefill: half full

  TimedTotals<2> totals;
  std::barrier<> sync(ctx.threads());
  at_least(ctx, 0.5);
  std::atomic<uint64_t> bad{0};
  ctx.run_threads([&](ThreadState& t) {
    const int tid = t.index();
    std::vector<std::byte> in(data), out(slot_bytes);
    uint64_t mismatches = 0;
    timed_thread<2>(ctx, sync, totals, [&](uint64_t i) {
      if ((i & 1) == 0) {
        ring.push(tid, in.data());
        return 0;
      }
      ring.pop(tid, out.data());
      mismatches += out[slot_bytes - 1] != data[slot_bytes - 1];
      return 1;
    });
    bad.fetch_add(mismatches);
  });
  if (bad.load() != 0) ctx.fail(std::to_string(bad.load()) + " pops returned data no push wrote");
  record_timed<2>(ctx, totals, {"push", "pop"});
  const uint64_t llc = platform::llc_bytes();
  const double working_set = static_cast<double>(slots) * slot_bytes;
  ctx.metric("working_set", working_set, "B");
  if (llc > 0) ctx.metric("working_set_vs_llc", working_set / static_cast<double>(llc), "ratio");
  ctx.note("published_setup", std::string("published numbers: ") + kPublishedSource +
                                  ", 14 producers + 14 consumers, "
                                  "32K slots of 4 KB; this run: " +
                                  std::to_string(ctx.threads()) + " threads each pushing and popping");
  ctx.note("tx",
           "tx = per-thread undo log in the pool: the slot's old bytes (push) or old stamp (pop) are persisted and "
           "the log marked valid before the in-place write; commit invalidates the log (PMDK tx_add_range-like)");

  // Published values beside ours, in ns.
  const std::string d = p.text("design"), domain = p.text("domain");
  const std::string system = design == RingDesign::volatile_ring ? "volatile" : d + "-" + domain;
  // Figure 16(a) used slot flushing under eADR ("we flush slot data in eADR mode for all subsequent experiments").
  const bool eadr = persist::caches_are_durable(p.domain());
  const bool fig16_setup = !eadr || flush_slots;
  for (const char* op : {"push", "pop"})
    for (const char* stat : {"avg", "p99", "p999"}) {
      if (fig16_setup)
        if (auto v = published_ring_latency(system, op, stat))
          ctx.metric(std::string("published_") + op + "_latency_" + stat, *v * 1e3, "ns", MetricKind::published,
                     kPublishedSource);
      if (eadr && !flush_slots)
        if (auto v = published_r5_ratio(d, op, stat))
          ctx.metric(std::string("published_noflush_ratio_") + op + "_" + stat, *v, "ratio", MetricKind::published,
                     kPublishedSource);
    }
}

ParamSpec slot_flush_param() {
  ParamSpec s;
  s.name = "slot_flush";
  s.type = ParamType::boolean;
  s.doc = "write back slot data with clwb even under eADR (recommendation R5); only eADR runs differ";
  s.defaults = {"false", "true"};
  return s;
}

const CaseRegistration ring_case{CaseDef{
    .suite = "lockfree",
    .name = "ring",
    .summary = "ring buffer push/pop latency (avg, p99, p99.9) per design and domain, slot flush under eADR on/off "
               "([PMIdioBench] Figures 15, 16(a))",
    .params = {std_params::choice("design",
                                  "volatile: Krizhanovsky on DRAM; tx: undo-log transactions (ADR, eADR); "
                                  "txfree: slot stamps + push positions (eADR)",
                                  {"volatile", "tx", "txfree"}, {"volatile", "tx", "txfree"}),
               std_params::domain({"none", "adr", "eadr"}), std_params::medium(), slot_flush_param(),
               std_params::size("slot", "bytes per slot", {"4096"}, {"4096"}, 8, 1 << 20),
               std_params::size("slots", "slots in the ring (a power of two); 32K x 4 KB = 128 MiB, beyond the LLC",
                                {"32768"}, {"16384"}, 2, 1 << 24),
               std_params::threads({default_threads()})},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::lockfree
