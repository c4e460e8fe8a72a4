// idio.i5_store_vs_pstore: I5, store bandwidth lower than p-store bandwidth ([PMIdioBench] §4.5, Fig. 6).
// The same vector stores with and without a flush after each access, over sizes × threads (the heatmap)
// and both patterns. Without the flush the cache writes lines back when it evicts them, in its own order;
// on DCPMM that order defeats the XPPrefetcher and the un-flushed stores come out slower.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

const CaseRegistration registration{stream_case(
    "i5_store_vs_pstore", "I5: store versus p-store (store + flush) bandwidth, sizes x threads", std::nullopt,
    {std_params::medium(), adr_param(), std_params::flush({"auto"}), pattern_param({"seq"}),
     std_params::choice("op", "store: cached stores, no flush; pstore: the same stores + flush + fence",
                        {"store", "pstore"}, {"store", "pstore"}),
     std_params::size("size", "bytes per access", size_strings(64, 4096), {"64", "256", "4096"}, 64, 1 << 20),
     std_params::threads(thread_sweep(), thread_ends())})};

}  // namespace
}  // namespace pmlab::suites::idio
