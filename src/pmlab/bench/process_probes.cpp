// The process-wide state the runner watches between runs besides what its owners register themselves
// (common/process_state.hpp): the environment variables that steer libpmem and pmlab's persistence, and the
// CPUs the main thread may run on (a case that pinned the calling thread would leave every later run on
// one CPU).
#include <sched.h>

#include <cstdlib>
#include <string>

#include "pmlab/common/process_state.hpp"

namespace pmlab::bench {
namespace {

// PMEM_IS_PMEM_FORCE is left out on purpose: pmlab sets it once, before the first PMDK peer, for the rest
// of the process (pmdk/environment.hpp), so its one change is intended.
constexpr const char* kWatched[] = {"PMEM_NO_FLUSH",      "PMEM_NO_MOVNT",      "PMEM_MOVNT_THRESHOLD",
                                    "PMEM_NO_CLWB",       "PMEM_NO_CLFLUSHOPT", "PMEM_NO_GENERIC_MEMCPY",
                                    "PMLAB_FORCE_DOMAIN", "PMLAB_FORCE_FLUSH"};

std::string describe_environment() {
  std::string out;
  for (const char* name : kWatched) {
    const char* v = std::getenv(name);
    out += std::string(out.empty() ? "" : " ") + name + "=" + (v ? v : "(unset)");
  }
  return out;
}

std::string describe_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "(unreadable)";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}

const StateProbeRegistration environment_probe{"environment", describe_environment};
const StateProbeRegistration affinity_probe{"main thread CPUs", describe_affinity};

}  // namespace
}  // namespace pmlab::bench
