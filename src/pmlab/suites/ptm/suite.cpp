#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ptm {
namespace {
const bench::SuiteRegistration suite{
    "ptm", "persistent transactions ([OptanePTM], [PMDKOverheads]): undo and redo PTMs and PMDK libpmemobj on "
           "SPS, a queue, a hash map, a B+-tree and bank transfers, under ADR, eADR, PDRAM and PDRAM-Lite; overhead "
           "breakdown (logging, flushing, fencing)"};
}  // namespace
}  // namespace pmlab::suites::ptm
