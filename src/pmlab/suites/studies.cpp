// The studies pmlab runs, one suite each: the name `pmlab run` selects and the one line `pmlab list` and the
// report show for it. Their cases register beside their code (suites/<study>/).
#include "pmlab/bench/case.hpp"

namespace pmlab::suites {
namespace {

const bench::SuiteRegistration studies[] = {
    {"core",
     "cost of one persist (store + flush + fence) per flush instruction, domain, size and medium, "
     "and the persistence vocabulary's own overhead against raw intrinsics"},
    {"crash", "cost of the crash-consistency simulator (crash testing itself is `pmlab crash`)"},
    {"ds",
     "which data structure to put on PMEM and at what persistence cost (storeds-bench [StoredsBench]): YCSB "
     "workloads over array, hashtable, skiplist, B+-tree and list in dram, pmem-volatile, persist and tx "
     "(PMDK transactions) modes, beside PMDK's example maps; overhead decomposition [PMDKOverheads]"},
    {"idio",
     "PMIdioBench idiosyncrasies I1-I8 on DRAM and the pool, classified ([PMIdioBench] Table 1) with the "
     "recommendations R1-R7 (Table 4) and peer checks against likwid-bench and fio"},
    {"lockfree",
     "lock-free persistent structures ([PMIdioBench] §6): Harris sets (volatile, TLog, Log-free, SOFT, "
     "Link-free) and Krizhanovsky ring buffers (volatile, TX, TX-free) under ADR and eADR, beside the "
     "published numbers"},
    {"model",
     "the PMEM device model: EWR/RWR/hit ratios of known access streams beside published DCPMM data "
     "(I3, the XPBuffer knee, I6, I7), the model's cost per event, and emulation against DRAM"},
    {"primitives",
     "log writers (classic, header, header-dancing, zero; padded or not) against libpmemlog, and "
     "failure-atomic page flushers (cow, ulog, hybrid) against libpmemblk ([PMemIO] §3)"},
    {"ptm",
     "persistent transactions ([OptanePTM], [PMDKOverheads]): undo and redo PTMs and PMDK libpmemobj on "
     "SPS, a queue, a hash map, a B+-tree and bank transfers, under ADR, eADR, PDRAM and PDRAM-Lite; overhead "
     "breakdown (logging, flushing, fencing)"},
};

}  // namespace
}  // namespace pmlab::suites
