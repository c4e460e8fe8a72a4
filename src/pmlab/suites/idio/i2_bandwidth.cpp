// idio.i2_bandwidth: I2, asymmetric load / p-store bandwidth ([PMIdioBench] §4.2, Fig. 3b–d). Sequential
// load, store, and p-store (stores + flush, or nt-stores) bandwidth versus access size (64 B – 64 KiB) and
// threads (1 … all CPUs), on DRAM and on the pool. Its largest accesses are also what idio.vs_likwid compares
// with likwid-bench.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

std::optional<std::string> redundant(const Params& p) {
  if (p.text("op") != "pstore" && p.text("flush") != "auto") return "only a p-store flushes";
  return std::nullopt;
}

const CaseRegistration registration{stream_case(
    "i2_bandwidth", "I2: sequential load, store and p-store bandwidth versus access size and threads", std::nullopt,
    {std_params::medium(),
     adr_param(),
     std_params::choice("op", "load: vector loads; store: cached stores, no flush; pstore: stores + flush + "
                              "fence (or nt-stores + fence with flush=ntstore)",
                        {"load", "store", "pstore"}, {"load", "store", "pstore"}),
     std_params::flush({"auto", "ntstore"}),
     std_params::size("size", "bytes per access", size_strings(64, 64 << 10), {"64", "256", "4096", "65536"}, 64,
                      1 << 20),
     std_params::threads(thread_sweep(), thread_ends())},
    redundant)};

}  // namespace
}  // namespace pmlab::suites::idio
