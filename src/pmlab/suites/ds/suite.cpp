#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ds {
namespace {
const bench::SuiteRegistration suite{
    "ds", "which data structure to put on PMEM and at what persistence cost (storeds-bench [StoredsBench]): YCSB "
          "workloads over array, hashtable, skiplist, B+-tree and list in dram, pmem-volatile, persist and tx "
          "(PMDK transactions) modes, beside PMDK's example maps; overhead decomposition [PMDKOverheads]"};
}  // namespace
}  // namespace pmlab::suites::ds
