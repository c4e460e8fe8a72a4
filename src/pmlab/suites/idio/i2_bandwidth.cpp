// idio.i2_bandwidth: I2, asymmetric load / p-store bandwidth ([PMIdioBench] §4.2, Fig. 3b–d). Sequential
// load, store, and p-store (stores + flush, or nt-stores) bandwidth versus access size (64 B – 64 KiB) and
// threads (1 … all CPUs), on DRAM and on the pool. Its largest accesses are also what idio.vs_likwid compares
// with likwid-bench. Every thread count is swept under --quick too: bandwidth against threads at 256 B (four
// lines, the media's access unit) is [PMemIO] Fig. 2, printed beside [OptaneGuide] Fig. 4's published curves.
#include "pmlab/bench/case.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

std::optional<std::string> redundant(const Params& p) {
  if (p.text("op") != "pstore" && p.text("flush") != "auto") return "only a p-store flushes";
  return std::nullopt;
}

// [OptaneGuide] Fig. 4's bandwidth at this run's thread count, for the operations it measured: 256 B accesses
// per thread on six interleaved DIMMs (Optane) or six DRAM channels, 1-24 threads.
void add_published(RunContext& ctx) {
  const Params& p = ctx.params();
  if (p.size("size") != 256 || p.integer("threads") > 24) return;
  const std::string op = p.text("op");
  const persist::FlushInstruction flush = ctx.persister().config().flush;
  const char* column = op == "load"                                  ? "Read"
                       : op != "pstore"                              ? nullptr
                       : flush == persist::FlushInstruction::ntstore ? "Write(ntstore)"
                       : flush == persist::FlushInstruction::clwb    ? "Write(clwb)"
                                                                     : nullptr;
  if (column == nullptr) return;
  const bool pool = p.text("medium") == "pool";
  const std::string file =
      pool ? "optane-study/04-bandwidth_thcount_optane.csv" : "optane-study/04-bandwidth_thcount_dram.csv";
  auto gb_s =
      model::published_csv_cell(file, std::to_string(p.integer("threads")), column,
                                std::string("[OptaneGuide] Fig. 4, ") + (pool ? "Optane DC PMM, 6 DIMMs" : "DRAM") +
                                    ", 256 B accesses, GB/s read as 10^9 B/s (" + file + ")");
  if (!gb_s) {
    ctx.note("published", gb_s.status().message());
    return;
  }
  ctx.metric("published_bandwidth", gb_s->value * 1e9 / 1048576.0, "MiB/s", MetricKind::published, gb_s->source);
}

CaseDef with_published(CaseDef def) {
  def.body = [measure = def.body](RunContext& ctx) {
    measure(ctx);
    add_published(ctx);
  };
  return def;
}

const CaseRegistration registration{with_published(stream_case(
    "i2_bandwidth", "I2: sequential load, store and p-store bandwidth versus access size and threads", std::nullopt,
    {std_params::medium(), adr_param(),
     std_params::choice("op",
                        "load: vector loads; store: cached stores, no flush; pstore: stores + flush + "
                        "fence (or nt-stores + fence with flush=ntstore)",
                        {"load", "store", "pstore"}, {"load", "store", "pstore"}),
     std_params::flush({"auto", "ntstore"}),
     std_params::size("size", "bytes per access", size_strings(64, 64 << 10), {"64", "256", "4096", "65536"}, 64,
                      1 << 20),
     std_params::threads(thread_sweep(), thread_sweep())},
    redundant))};

}  // namespace
}  // namespace pmlab::suites::idio
