// The model suite: the device model of the memory side (src/pmlab/model) validated against published
// Optane measurements, what it costs per event, and what its emulation does to a real DRAM run.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/model/common.hpp"

namespace pmlab::suites::model {
namespace {
const bench::SuiteRegistration suite{
    kSuite, "the PMEM device model: EWR/RWR/hit ratios of known access streams beside published DCPMM data "
            "(I3, the XPBuffer knee, I6, I7), the model's cost per event, and emulation against DRAM"};
}  // namespace
}  // namespace pmlab::suites::model
