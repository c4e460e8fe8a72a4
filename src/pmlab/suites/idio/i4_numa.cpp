// idio.i4_numa: I4, poor p-store bandwidth on remote NUMA memory ([PMIdioBench] §4.4, Fig. 5). P-store
// bandwidth with the threads on the memory's own node (local) and on another node (remote), over
// sizes × threads for the heatmap of their difference. Needs two NUMA nodes: on one, every run is recorded
// skipped with that reason.
#include "pmlab/bench/case.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/numa_placement.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

void body(RunContext& ctx) {
  if (auto why = numa_skip_reason(platform::numa_nodes())) ctx.skip(*why);
  const Params& p = ctx.params();
  StreamJob job = stream_job(p, StreamOp::pstore);
  // Every thread's span must sit on one node, or "local" means nothing.
  const int node = memory_node_of(ctx.region().base);
  for (int t = 1; t < ctx.threads(); ++t)
    if (memory_node_of(ctx.region().base + job.span * static_cast<uint64_t>(t)) != node)
      ctx.skip("the region spans several NUMA nodes (interleaved memory): local and remote are undefined");
  auto cpus = place_threads(parse_locality(p.text("locality")), node, allowed_cpus_by_node(), ctx.threads());
  if (!cpus) ctx.skip(cpus.status().message());
  job.cpus = *cpus;
  ctx.metric("memory_node", node, "id");
  ctx.metric("cpu_node", platform::numa_node_of_cpu(job.cpus.front()), "id");
  run_stream(ctx, job);
}

// The stream case's own body is replaced: the threads are placed by NUMA node before they stream.
CaseDef numa_case() {
  CaseDef def =
      stream_case("i4_numa", "I4: local versus remote NUMA p-store bandwidth, sizes x threads (needs two NUMA nodes)",
                  StreamOp::pstore,
                  {std_params::medium(), adr_param(), std_params::flush({"auto"}),
                   std_params::choice("locality", "local: threads on the memory's NUMA node; remote: on another node",
                                      {"local", "remote"}, {"local", "remote"}),
                   pattern_param({"seq"}),
                   std_params::size("size", "bytes per write", size_strings(64, 4096), {"256", "4096"}, 64, 1 << 20),
                   std_params::threads(thread_sweep(), thread_ends())});
  def.body = body;
  return def;
}

const CaseRegistration registration{numa_case()};

}  // namespace
}  // namespace pmlab::suites::idio
