#include "pmlab/bench/case.hpp"

namespace pmlab::suites::primitives {
namespace {
const bench::SuiteRegistration suite{
    "primitives", "log writers (classic, header, header-dancing, zero; padded or not) against libpmemlog, and "
                  "failure-atomic page flushers (cow, ulog, hybrid) against libpmemblk ([PMemIO] §3)"};
}  // namespace
}  // namespace pmlab::suites::primitives
