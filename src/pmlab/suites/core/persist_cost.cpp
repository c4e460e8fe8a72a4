// core.persist: what one persist of `size` bytes costs: copy into the medium, write back, fence, as the
// persistence vocabulary does it for every design. Swept over flush instruction × durability domain ×
// size × pattern × medium, so DRAM and the pool sit side by side. Pattern `same` persists one place over
// and over: the next write-back of a line waits for the one before it ([PMemIO] §2.3, Fig. 4).
#include <algorithm>
#include <cstring>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::suites::core {
namespace {

using namespace bench;

// Larger than the last-level cache, so sequential persists stream to memory rather than hit one set
// of lines again and again.
uint64_t span_bytes() {
  const uint64_t llc = platform::llc_bytes();
  return std::max<uint64_t>(64ULL << 20, 2 * llc);
}

std::optional<std::string> redundant(const Params& p) {
  const persist::Domain domain = p.domain();
  const persist::FlushInstruction flush = p.flush();
  const persist::FlushInstruction best = persist::best_line_flush(platform::CpuFeatures::host());
  if (!persist::persists(domain) && flush != best) return "domain none issues no flush";
  if (persist::caches_are_durable(domain) && flush != best && flush != persist::FlushInstruction::ntstore)
    return "eADR issues no line flush";
  return std::nullopt;
}

// [OptaneGuide] Fig. 2's idle latency of one 64 B persistent write, by store + clwb or by nt-store, beside the
// runs that do the same under ADR ([PMemIO] Fig. 4 has no numbers in its text).
void add_published(RunContext& ctx) {
  const Params& p = ctx.params();
  const persist::FlushInstruction flush = p.flush();
  if (p.size("size") != 64 || p.domain() != persist::Domain::adr) return;
  if (flush != persist::FlushInstruction::clwb && flush != persist::FlushInstruction::ntstore) return;
  constexpr const char* kFile = "optane-study/02-best_case_latency.csv";
  const bool nt = flush == persist::FlushInstruction::ntstore;
  const bool pool = p.text("medium") == "pool";
  auto ns = model::published_csv_cell(kFile, nt ? "Write\\(ntstore)" : "Write\\(clwb)", pool ? "Optane" : "DRAM",
                                      std::string("[OptaneGuide] Fig. 2, idle 64 B write by ") +
                                          (nt ? "nt-store" : "store + clwb") + ", " +
                                          (pool ? "Optane DC PMM" : "DRAM") + " (" + kFile + ")");
  if (ns) ctx.metric("published_latency", ns->value, "ns", MetricKind::published, ns->source);
  else ctx.note("published", ns.status().message());
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const uint64_t size = p.size("size");
  const Pattern pattern = parse_pattern(p.text("pattern"));
  const persist::Persister& persister = ctx.persister();
  const uint64_t span = ctx.region().size / static_cast<uint64_t>(ctx.threads()) & ~uint64_t{4095};
  if (span < size) ctx.fail("region too small for the access size");

  ctx.set_bytes_per_op(static_cast<double>(size));
  ctx.run_threads([&](ThreadState& t) {
    std::byte* base = ctx.region().base + span * static_cast<uint64_t>(t.index());
    const size_t slots = static_cast<size_t>(span / size);
    const auto offsets = make_offsets(pattern, span, size, std::clamp<size_t>(slots, 1 << 12, 1 << 20),
                                      0x5eed0000ULL + static_cast<uint64_t>(t.index()));
    const size_t mask = offsets.size() - 1;
    std::vector<unsigned char> source(size);
    for (size_t i = 0; i < size; ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
    t.measure([&](uint64_t i) {
      void* dst = base + offsets[i & mask];
      persister.copy_persist(dst, source.data(), size);
    });
  });
  add_published(ctx);
}

const CaseRegistration registration{CaseDef{
    .suite = "core",
    .name = "persist",
    .summary = "latency of one persist (copy `size` bytes, flush, fence) per flush instruction and domain",
    .params = {std_params::medium(), std_params::domain({"none", "adr", "eadr"}),
               std_params::flush({"clflush", "clflushopt", "clwb", "ntstore"}),
               std_params::size("size", "bytes written and persisted per operation", {"64", "256", "1K", "4K", "16K"},
                                {"64", "1K", "16K"}, 8, 1 << 24),
               std_params::choice("pattern",
                                  "seq: consecutive addresses; rand: uniformly random, size-aligned; "
                                  "same: every persist to the same `size` bytes ([PMemIO] Fig. 4)",
                                  {"seq", "rand", "same"}, {"seq", "rand", "same"}),
               std_params::threads()},
    .region_bytes = [](const Params& p) { return span_bytes() * static_cast<uint64_t>(p.integer("threads")); },
    .redundant = redundant,
    .body = body,
    // The report's "flush instruction by persist size" compares these points: its ratios need an interval.
    .quick_repetitions =
        [](const Params& p) {
          return p.integer("threads") == 1 && p.text("medium") == "pool" && p.text("domain") == "adr" ? 3 : 0;
        },
}};

}  // namespace
}  // namespace pmlab::suites::core
