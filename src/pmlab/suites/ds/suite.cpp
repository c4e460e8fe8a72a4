#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ds {
namespace {
const bench::SuiteRegistration suite{
    "ds", "which data structure to put on PMEM and at what persistence cost (seed 001, storeds-bench): YCSB "
          "workloads over array, hashtable, skiplist, B+-tree and list in dram, pmem-volatile, persist and tx "
          "(PMDK transactions) modes, beside PMDK's example maps; overhead decomposition (seed 004)"};
}  // namespace
}  // namespace pmlab::suites::ds
