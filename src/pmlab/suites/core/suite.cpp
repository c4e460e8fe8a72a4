#include "pmlab/bench/case.hpp"

namespace pmlab::suites::core {
namespace {
const bench::SuiteRegistration suite{
    "core", "cost of one persist (store + flush + fence) per flush instruction, domain, size and medium, "
            "and the persistence vocabulary's own overhead against raw intrinsics"};
}  // namespace
}  // namespace pmlab::suites::core
