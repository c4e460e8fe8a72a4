// idio.i6_read: I6, sequential reads faster than random reads ([PMIdioBench] §4.6, Fig. 7a–c). Read bandwidth
// versus access size for consecutive accesses and for a random permutation of the same slots: every slot read
// once per pass, no stride for a prefetcher to learn and no repeat for a cache to keep. Prefetchers are
// defeated by the order, never by writing MSRs.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

void body(RunContext& ctx) {
  run_stream(ctx, stream_job(ctx.params(), StreamOp::load));
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "i6_read",
    .summary = "I6: sequential versus random-permutation read bandwidth versus access size",
    .params = {std_params::medium(),
               pattern_param(),
               std_params::size("size", "bytes per read", size_strings(64, 64 << 10), {"64", "256", "4096", "65536"}, 64,
                                1 << 20),
               std_params::threads(thread_sweep(), {std::to_string(all_cpus())}),
               fio_param()},
    .region_bytes = stream_region_bytes,
    .redundant = {},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
