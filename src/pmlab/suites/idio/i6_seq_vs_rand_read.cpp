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

const CaseRegistration registration{
    stream_case("i6_read", "I6: sequential versus random-permutation read bandwidth versus access size", StreamOp::load,
                {std_params::medium(), pattern_param(),
                 std_params::size("size", "bytes per read", size_strings(64, 64 << 10), {"64", "256", "4096", "65536"},
                                  64, 1 << 20),
                 std_params::threads(thread_sweep(), {std::to_string(all_cpus())})})};

}  // namespace
}  // namespace pmlab::suites::idio
