#include <algorithm>
#include <string>

#include "pmlab/bench/case.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/suites/lockfree/timed_ops.hpp"

namespace pmlab::suites::lockfree {

std::string default_threads() {
  const size_t cpus = platform::allowed_cpus().size();
  return std::to_string(std::clamp<size_t>(cpus, 1, 28));
}

namespace {
const bench::SuiteRegistration suite{
    "lockfree", "lock-free persistent structures ([PMIdioBench] §6): Harris sets (volatile, TLog, Log-free, SOFT, "
                "Link-free) and Krizhanovsky ring buffers (volatile, TX, TX-free) under ADR and eADR, beside the "
                "published numbers"};
}  // namespace
}  // namespace pmlab::suites::lockfree
