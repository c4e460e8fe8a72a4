// The points `pmlab run --stability` watches (bench/stability.hpp): each persistence-sensitive in its own way,
// one per family that flushes and fences — an isolated p-store, a p-store in a loop, a log append, a PTM
// transaction.
#include "pmlab/bench/stability.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::suites {
namespace {

// The write-back the p-store points use: the CPU's best line flush, which a CPU without clwb runs too.
const std::string kFlush = persist::to_string(persist::best_line_flush(platform::CpuFeatures::host()));

const bench::StabilityRegistration samples[] = {
    bench::StabilityRegistration{
        {"^idio\\.i1_latency/medium:pool/domain:adr/op:pstore/flush:" + kFlush + "/hit_ratio:1\\.0/threads:1$",
         {"latency_p50"}}},
    bench::StabilityRegistration{
        {"^core\\.persist/medium:pool/domain:adr/flush:" + kFlush + "/size:64/pattern:rand/threads:1$",
         {"latency_p50", "throughput"}}},
    bench::StabilityRegistration{{"^primitives\\.log_append/medium:pool/domain:adr/flush:" + kFlush +
                                      "/writer:zero/padding:none/stores:streaming/size:64/threads:1$",
                                  {"throughput"}}},
    bench::StabilityRegistration{
        {"^ptm\\.tx/ptm:redo/durability:adr/workload:sps-1/threads:1/medium:pool$", {"throughput"}}},
};

}  // namespace
}  // namespace pmlab::suites
