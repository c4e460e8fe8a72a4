// ptm.tx: [OptanePTM] Figure 1 — throughput of undo, redo and PMDK per workload, durability model and
// thread count. ptm.breakdown: [PMDKOverheads] — the same transactions with logging, flushing and fencing
// switched off in turn (ADR, one thread), each as a share of the full cost.
#include "pmlab/bench/case.hpp"
#include "pmlab/ptm/common/durability.hpp"
#include "pmlab/suites/ptm/run_ptm.hpp"

namespace pmlab::suites::ptm {
namespace {

using namespace bench;

ParamSpec ptm_param() {
  return std_params::choice("ptm",
                            "transactional memory: undo (undo log), redo (redo log), pmdk (libpmemobj), volatile (the "
                            "baseline: the undo PTM with no log, no flush, no fence, on DRAM; durability pdram only)",
                            {"undo", "redo", "pmdk", "volatile"}, {"undo", "redo", "pmdk", "volatile"});
}

ParamSpec durability_param() {
  return std_params::choice("durability",
                            "durability model: adr (flush+fence), eadr (fence), pdram (all DRAM persistent: nothing), "
                            "pdram-lite (redo log in persistent DRAM, data eADR)",
                            {"adr", "eadr", "pdram", "pdram-lite"}, {"adr", "eadr", "pdram", "pdram-lite"});
}

ParamSpec workload_param(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return std_params::choice("workload",
                            "sps-N (N random swaps per transaction), queue (dequeue+enqueue: free+alloc), hashmap "
                            "(50% lookups, 25% upserts, 25% removes), bptree (50% lookups, 50% upserts), bank "
                            "(90% transfers, 10% vacation-like reservations)",
                            workload_names(), std::move(defaults), std::move(quick));
}

// The medium follows the durability model: pdram runs on DRAM, the rest on the pool or on a node's memory
// (numa:N, a tier measured as the pool would be).
std::optional<std::string> medium_mismatch(const Params& p) {
  auto d = pmlab::ptm::parse_durability(p.has("durability") ? p.text("durability") : std::string("adr"));
  if (!d) return std::nullopt;
  const std::string medium = p.text("medium");
  if (pmlab::ptm::data_on_dram(*d)) {
    if (medium != "dram") return "durability " + p.text("durability") + " runs on dram";
  } else if (medium != "pool" && !medium.starts_with("numa:")) {
    return "durability " + p.text("durability") + " runs on pool or numa:N";
  }
  return std::nullopt;
}

uint64_t bytes_of(const Params& p, bool quick_sizing) {
  auto spec = spec_of(p, quick_sizing);
  if (!spec) return 1 << 20;
  if (spec->ptm == "pmdk") return 1 << 20;  // PMDK has its own pool file; the region only locates the pool
  return heap_bytes(*spec) + log_bytes(*spec, static_cast<int>(p.integer("threads")));
}

void tx_body(RunContext& ctx) {
  auto spec = spec_of(ctx.params(), ctx.quick());
  if (!spec) ctx.fail(spec.status().message());
  // PMDK under eADR is PMDK with its flushes off and its fences kept: what libpmem does when the platform
  // reports eADR (PMEM_NO_FLUSH=1 forces it, but only for a whole process: libpmem reads it at load time).
  if (spec->ptm == "pmdk" && spec->durability == pmlab::ptm::Durability::eadr) spec->elide_flush = true;
  run(ctx, *spec);
}

const CaseRegistration tx_case{CaseDef{
    "ptm",
    "tx",
    "transactions per second of undo, redo and PMDK per workload, durability model and thread count "
    "([OptanePTM] Fig. 1)",
    {ptm_param(), durability_param(),
     workload_param({"sps-1", "sps-4", "sps-16", "sps-64", "queue", "hashmap", "bptree", "bank"},
                    {"sps-1", "sps-64", "queue", "hashmap", "bptree", "bank"}),
     std_params::threads({"1", "2", "4", "8", "16", "32", "64"}, {"1", "2"}), std_params::medium({"pool", "dram"})},
    // Full-size records whatever the sweep: the region is sized before the body knows --quick.
    [](const Params& p) { return bytes_of(p, false); },
    [](const Params& p) -> std::optional<std::string> {
      const auto durability = pmlab::ptm::parse_durability(p.text("durability"));
      if (p.text("ptm") == "pmdk" && durability && (log_on_dram(*durability) || data_on_dram(*durability)))
        return std::string("PMDK has no PDRAM mode (only ADR, or eADR with its flushes off)");
      if (p.text("ptm") == "volatile" && p.text("durability") != "pdram")
        return std::string("the volatile baseline persists nothing: it runs once, on DRAM, under durability pdram");
      return medium_mismatch(p);
    },
    tx_body,
    // The report's "PTM by durability domain" compares the one-thread points, and ptm.scaling divides the
    // two-thread points by them: their ratios need an interval.
    [](const Params& p) { return p.integer("threads") <= 2 ? 3 : 0; }}};

void breakdown_body(RunContext& ctx) {
  auto spec = spec_of(ctx.params(), ctx.quick());
  if (!spec) ctx.fail(spec.status().message());
  ctx.note("breakdown", "ADR, one thread; the share of a cost is 1 - full throughput / throughput without it");
  // Shares are differences of two runs: 50 ms runs (--quick) on a shared machine are too noisy for that.
  if (ctx.control().ops == 0 && ctx.control().duration_s < 0.2) {
    ctx.control().duration_s = 0.2;
    ctx.note("duration", "raised to 0.2 s (a breakdown point)");
  }
  run(ctx, *spec);
}

const CaseRegistration breakdown_case{
    CaseDef{"ptm",
            "breakdown",
            "throughput with logging, flushing and fencing switched off in turn, under ADR [PMDKOverheads]",
            {ptm_param(), workload_param({"sps-16", "hashmap"}, {}),
             std_params::choice("cost", "full, or one cost switched off: no-log, no-flush, no-fence",
                                {"full", "no-log", "no-flush", "no-fence"}, {"full", "no-log", "no-flush", "no-fence"}),
             std_params::threads({"1"}), std_params::medium({"pool"})},
            [](const Params& p) { return bytes_of(p, false); },
            [](const Params& p) -> std::optional<std::string> {
              if (p.text("ptm") == "volatile")
                return std::string("the volatile baseline has no persistence cost to switch off");
              return std::nullopt;
            },
            breakdown_body,
            // ptm.share subtracts two runs: their difference needs an interval even in a quick run.
            [](const Params&) { return 3; }}};

void target_body(RunContext& ctx) {
  auto spec = spec_of(ctx.params(), ctx.quick());
  if (!spec) ctx.fail(spec.status().message());
  run_target(ctx, *spec);
}

const CaseRegistration target_case{
    CaseDef{"ptm",
            "target",
            "undo, redo and PMDK side by side on SPS and the hash map, ADR, one thread (targets: redo >= 4x PMDK on "
            "SPS-1, 3x on the hash map, 10x on SPS-16/64; >= 1.3x undo; <= 2 fences per writing tx)",
            {std_params::choice("workload", "sps-N (N swaps per transaction) or hashmap",
                                {"sps-1", "sps-16", "sps-64", "hashmap"}, {"sps-1", "sps-16", "sps-64", "hashmap"}),
             std_params::choice("ptm", "all three PTMs run side by side", {"all"}, {"all"}), std_params::threads({"1"}),
             std_params::medium({"pool"})},
            [](const Params& p) {
              Params q = p;
              q.set("ptm", "undo");
              auto spec = spec_of(q, /*quick=*/false);  // sized for the full sweep's records, the more
              return spec ? 2 * (heap_bytes(*spec) + (256 << 10)) : uint64_t{1} << 20;
            },
            nullptr,
            target_body}};

}  // namespace
}  // namespace pmlab::suites::ptm
