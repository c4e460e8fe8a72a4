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

const CaseRegistration registration{stream_case(
    "i3_small_writes", "I3: sequential versus random p-store bandwidth for 64-512 B writes", StreamOp::pstore,
    {std_params::medium(), adr_param(), std_params::flush({"auto"}), pattern_param(),
     std_params::size("size", "bytes per write", {"64", "128", "256", "512"}, {}, 64, 1 << 20),
     std_params::threads(thread_sweep(), {std::to_string(all_cpus())})})};

}  // namespace
}  // namespace pmlab::suites::idio
