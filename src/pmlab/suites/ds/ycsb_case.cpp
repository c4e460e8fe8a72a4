// The ds suite's YCSB cases: ds.ycsb (one workload over one contender in one mode, ycsb_run.hpp) and the
// cases that run its points along another axis, ds.update_ratio and ds.threads.
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/suites/ds/contenders.hpp"
#include "pmlab/suites/ds/ycsb_run.hpp"

namespace pmlab::suites::ds {
namespace {

using namespace bench;

ParamSpec structure_param(const char* doc, bool with_list) {
  return std_params::choice("structure", doc, structure_names(with_list), structure_names(with_list));
}

// A node's memory is compared with a mode's own (ds.tier) on ds.ycsb's points alone: the other cases' runs
// there would stand in no row or figure.
std::optional<std::string> ycsb_only_on_a_node(const Params& p) {
  if (!media::names_a_node(p.text("medium"))) return std::nullopt;
  return std::string("on a NUMA node ds.ycsb runs the structures (ds.tier compares them)");
}

const CaseRegistration registration{CaseDef{
    .suite = "ds",
    .name = "ycsb",
    .summary = "YCSB throughput and latency per structure x mode x workload ([StoredsBench] Figure 1)",
    .params = {std_params::choice("structure",
                                  "the data structure (list: O(n) lookups, small record counts only; "
                                  "null: operations that return at once, the harness's own cost; "
                                  "null-predictable: the same on the operations with their types "
                                  "spread evenly; pmdk-*: PMDK's example maps, mode pmdk)",
                                  contender_names(/*with_list=*/true), contender_names(/*with_list=*/false)),
               std_params::choice("mode",
                                  "dram: volatile on DRAM; pmem-volatile: volatile on the pool; persist: "
                                  "crash-consistent on the pool; tx: failure-atomic through PMDK "
                                  "transactions; pmdk: PMDK's example maps (the peers)",
                                  {"dram", "pmem-volatile", "persist", "tx", "pmdk"},
                                  {"dram", "pmem-volatile", "persist", "tx", "pmdk"}),
               std_params::choice("breakdown",
                                  "switch one persistence cost off (the decomposition of "
                                  "[PMDKOverheads]; persist, tx and pmdk modes, workloads a and "
                                  "write-only): none, no-flush, no-fence, no-log (tx)",
                                  {"none", "no-flush", "no-fence", "no-log"},
                                  {"none", "no-flush", "no-fence", "no-log"}),
               std_params::medium(), workload_param(),
               std_params::choice("distribution", "request distribution; default: the workload's own",
                                  {"default", "uniform", "zipfian", "latest", "hotspot"}, {"default"}),
               records_param(), value_param(), std_params::threads()},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = [](RunContext& ctx) { run_ycsb(ctx, ctx.params()); },
    // The points ds.target divides (summary.cpp) and the report's "structure by workload" compares (durable
    // modes, one thread), and the DRAM points ds.harness and the persistent-vs-DRAM check hold them
    // against: their verdicts and ratios need an interval even in a quick run.
    .quick_repetitions =
        [](const Params& p) {
          const std::string& mode = p.text("mode");
          const bool compared = mode == "persist" || mode == "tx" || mode == "pmdk" || mode == "dram";
          return compared && p.text("breakdown") == "none" && p.integer("threads") == 1 ? 3 : 0;
        },
}};

// ds.update_ratio: [StoredsBench]'s read/write-ratio axis (Figure 1: 100(R)/0(W) … 0(R)/100(W)), swept for each
// of our structures in each mode: a YCSB mix of reads and updates over zipfian keys, updates% of them updates.
// The ds.ycsb run of mix:(100-u)/u/0/0/0, so both cases measure alike.
Params as_ycsb(const Params& p) {
  const int64_t updates = p.integer("updates");
  return ycsb_point(p, "mix:" + std::to_string(100 - updates) + "/" + std::to_string(updates) + "/0/0/0");
}

// [StoredsBench] §4 quotes four of Figure 1's bars, all on the write-only workload (0(R)/100(W)).
struct PublishedBar {
  const char* structure;
  const char* mode;
  double kops;
};
constexpr PublishedBar kPublishedWriteOnly[] = {
    {"bptree", "dram", 1420}, {"skiplist", "dram", 992}, {"bptree", "tx", 49}, {"skiplist", "tx", 152}};
constexpr const char* kPublishedSource =
    "[StoredsBench] §4 (Figure 1, 0(R)/100(W); PMEM-Trans is the tx mode; their machine and thread count)";

void update_ratio_body(RunContext& ctx) {
  const Params& p = ctx.params();
  run_ycsb(ctx, as_ycsb(p));
  if (p.integer("updates") != 100) return;
  for (const PublishedBar& bar : kPublishedWriteOnly)
    if (p.text("structure") == bar.structure && p.text("mode") == bar.mode)
      ctx.metric("published_throughput", bar.kops * 1e3, "ops/s", MetricKind::published, kPublishedSource);
}

const CaseRegistration update_ratio{CaseDef{
    .suite = "ds",
    .name = "update_ratio",
    .summary = "throughput versus the share of updates (0-100%) per structure and mode ([StoredsBench] Figure 1)",
    .params = {structure_param("the data structure", /*with_list=*/false),
               std_params::choice("mode", "dram | pmem-volatile | persist | tx, as in ds.ycsb",
                                  {"dram", "pmem-volatile", "persist", "tx"},
                                  {"dram", "pmem-volatile", "persist", "tx"}),
               std_params::medium(),
               std_params::integer("updates", "percent of operations that are updates; the rest are reads",
                                   {"0", "25", "50", "75", "100"}, {"0", "25", "50", "75", "100"}, 0, 100),
               records_param(), value_param(), std_params::threads()},
    .region_bytes = [](const Params& p) { return region_bytes(as_ycsb(p)); },
    .redundant =
        [](const Params& p) {
          if (auto node = ycsb_only_on_a_node(p)) return node;
          return redundant(as_ycsb(p));
        },
    .body = update_ratio_body,
}};

// ds.threads: each structure at 1 and 2 threads on the read-mostly workloads (B: 95% reads, C: reads only),
// in DRAM and persist modes: the ds.ycsb run of the same point, so both cases measure alike; ds.scaling
// (summary.cpp) divides the 2-thread throughput by the 1-thread one.
Params threads_as_ycsb(const Params& p) { return ycsb_point(p, p.json().at("workload")); }

const CaseRegistration threads_case{CaseDef{
    .suite = "ds",
    .name = "threads",
    .summary = "each structure at 1 and 2 threads on YCSB B and C, DRAM and persist modes (ds.scaling: the ratio)",
    .params = {structure_param("the data structure", /*with_list=*/false),
               std_params::choice("mode", "dram | persist, as in ds.ycsb", {"dram", "persist"}, {"dram", "persist"}),
               std_params::medium(),
               std_params::choice("workload", "the read-mostly YCSB workloads: b (95% reads, 5% updates), c (reads)",
                                  {"b", "c"}, {"b", "c"}),
               records_param(), value_param(), std_params::threads({"1", "2"}, {"1", "2"})},
    .region_bytes = [](const Params& p) { return region_bytes(threads_as_ycsb(p)); },
    .redundant =
        [](const Params& p) {
          if (auto node = ycsb_only_on_a_node(p)) return node;
          return redundant(threads_as_ycsb(p));
        },
    .body = [](RunContext& ctx) { run_ycsb(ctx, threads_as_ycsb(ctx.params())); },
    // ds.scaling's targeted points (persist B+-tree and hashtable) divide two runs: an interval even quick.
    .quick_repetitions =
        [](const Params& p) { return p.text("mode") == "persist" && is_targeted(p.text("structure")) ? 3 : 0; },
}};

}  // namespace
}  // namespace pmlab::suites::ds
