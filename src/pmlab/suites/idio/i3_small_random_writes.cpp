// idio.i3_small_writes: I3, poor bandwidth for small random writes ([PMIdioBench] §4.3, Fig. 4). Sequential
// versus random p-store bandwidth at 64–512 B. On DCPMM a random write smaller than the 256 B media line
// costs a read-modify-write; a medium without that mismatch shows only the CPU's own random-access cost.
// EWR is the device model's (kind modelled) when one is attached: this platform has no media counters.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

void body(RunContext& ctx) {
  run_stream(ctx, stream_job(ctx.params(), StreamOp::pstore));
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "i3_small_writes",
    .summary = "I3: sequential versus random p-store bandwidth for 64-512 B writes",
    .params = {std_params::medium(),
               adr_param(),
               std_params::flush({"auto"}),
               pattern_param(),
               std_params::size("size", "bytes per write", {"64", "128", "256", "512"}, {}, 64, 1 << 20),
               std_params::threads(thread_sweep(), {std::to_string(all_cpus())}),
               fio_param()},
    .region_bytes = stream_region_bytes,
    .redundant = {},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
