// The bandwidth loop of I2, I3, I4, I5 and I6: every thread streams operations of one size over its own
// span, in sequential or random-permutation order, and the harness times the loop (no per-op timer, which
// would dominate 64-byte operations).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"

namespace pmlab::suites::idio {

enum class StreamOp {
  load,    // read the access with vector loads
  store,   // ordinary stores, no flush: the cache writes the lines back when it evicts them
  pstore,  // persistent store: stores + flush + fence, or non-temporal stores + fence (flush=ntstore)
};
StreamOp parse_stream_op(const std::string& text);
const char* to_string(StreamOp op) noexcept;

struct StreamJob {
  StreamOp op = StreamOp::load;
  bench::Pattern pattern = bench::Pattern::seq;
  uint64_t size = 64;
  uint64_t span = 0;  // bytes per thread; the region holds threads × span
  // Pin thread i to cpus[i % size] instead of the harness's choice (I4 places threads by NUMA node).
  std::vector<int> cpus;
  // The persistence vocabulary to use instead of the run's (a peer comparison that needs nt-stores).
  const persist::Persister* persister = nullptr;
  // Memory to use instead of the run's region (threads × span bytes; a peer comparison's own pages).
  std::byte* base = nullptr;
};

// The job of a case whose params hold "size" and, unless the case fixes it, "pattern" (sequential otherwise).
StreamJob stream_job(const bench::Params& params, StreamOp op);

// Runs the job, records the harness's metrics plus `bandwidth` (MiB/s) and returns that bandwidth. With
// fio=on in the params, also runs fio's libpmem engine on the same job and records `fio_bandwidth` and
// `ratio_vs_fio`.
double run_stream(bench::RunContext& ctx, const StreamJob& job);

// Bytes of region a stream case needs at these params (threads × stream_span()).
uint64_t stream_region_bytes(const bench::Params& p);

// An idio bandwidth case: its body streams `op` (without one, the operation its "op" parameter names) and
// its region holds every thread's span. `params` are the case's own; the "fio" switch every bandwidth case
// offers is appended.
bench::CaseDef stream_case(std::string name, std::string summary, std::optional<StreamOp> op,
                           std::vector<bench::ParamSpec> params,
                           std::function<std::optional<std::string>(const bench::Params&)> redundant = {});

}  // namespace pmlab::suites::idio
