// Peer tools measured in the same run, so our numbers can be checked against them side by side:
// likwid-bench's streaming kernels (is our loop as fast as the memory allows?) and fio's libpmem engine
// (what the PMIdioBench scripts measured with). A missing or failing tool is a reason, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/platform/process.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {

using platform::find_program;

struct ToolOutput {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs argv (argv[0] searched in PATH) with `env` added to the environment; stdout and stderr captured.
// Killed after `timeout_s`. An error when it cannot start, times out or exits non-zero (with its last
// stderr line).
Result<ToolOutput> run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            double timeout_s);

// ---- likwid-bench
enum class LikwidKind { load, ntstore };
// The kernel for the widest vector ISA this CPU has (PMLAB_NO_AVX512 / _AVX2 respected):
// load_avx512 / store_mem_avx512, else load_avx / store_mem_avx (256-bit), else the SSE ones.
std::string likwid_kernel(LikwidKind kind);
// The "MByte/s:" figure of likwid-bench's report (10^6 bytes per second), converted to MiB/s.
Result<double> parse_likwid_bandwidth(const std::string& report);
// Runs the kernel with `threads` threads over `bytes` in total, `iterations` sweeps (likwid-bench's own -s
// estimate can make a run too short to measure, so the caller sizes the run); MiB/s. With `huge_pages`,
// glibc's malloc advises its large allocations for transparent huge pages
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc >= 2.35): likwid-bench allocates with posix_memalign and
// cannot be asked itself.
Result<double> run_likwid(LikwidKind kind, int threads, uint64_t bytes, uint64_t iterations, bool huge_pages = false);

// ---- fio, libpmem engine
struct FioJob {
  StreamOp op = StreamOp::pstore;
  bool nontemporal = false;  // pstore with nt-stores (direct=1) or with stores + flush (direct=0)
  bench::Pattern pattern = bench::Pattern::seq;
  uint64_t size = 256;       // bs
  int threads = 1;           // numjobs, one file each, pinned one per CPU
  uint64_t span = 64 << 20;  // bytes per job
  double duration_s = 0.5;
  std::string directory;  // where the job files go (removed afterwards)
};
// fio's command line for the job (without the program name), and the environment it needs.
std::vector<std::string> fio_arguments(const FioJob& job, const std::string& name, const std::vector<int>& cpus);
std::vector<std::string> fio_environment(const FioJob& job);
// The job's aggregate bandwidth from fio's JSON output, in MiB/s.
Result<double> parse_fio_bandwidth(const std::string& json, bool write);
Result<double> run_fio(const FioJob& job);

// The directory of the file mapped at `memory` (a pool), or /dev/shm (DRAM) for anonymous memory: fio's
// libpmem engine truncates the file it maps, so it gets a file of its own beside the pool, on the same
// filesystem, never the pool itself.
std::string directory_beside(const void* memory);

// Runs fio on `job` and records fio_bandwidth and ratio_vs_fio (ours / fio) beside `ours_mib_s`, or a
// note saying why there is no fio number.
void record_fio_beside(bench::RunContext& ctx, FioJob job, const void* memory, double ours_mib_s);

}  // namespace pmlab::suites::idio
