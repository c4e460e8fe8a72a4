#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ds {
namespace {
const bench::SuiteRegistration suite{
    "ds", "which data structure to put on PMEM and at what persistence cost (seed 001, storeds-bench): YCSB "
          "workloads over array, hashtable, skiplist, B+-tree and list in dram, pmem-volatile and persist modes"};
}  // namespace
}  // namespace pmlab::suites::ds
