// idio.i7_rewrite: I7, p-stores are read-modify-write transactions ([PMIdioBench] §4.7, Fig. 7d). Repeated
// full p-stores of one 256 B block (one DCPMM XPLine) against the same p-stores spread over consecutive
// blocks, timed one by one. On DCPMM the repeated block is written to media at once and each 64 B
// request costs a media read (EWR ≈ 0.91, RWR ≈ 0.79 in PMIdioBench's counters). Those are media counters:
// here they come from the device model (kind modelled) when one is attached, and from nowhere otherwise.
#include <memory>

#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

constexpr uint64_t kBlock = 256;

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const bool same = p.text("target") == "same";
  const persist::Persister& persister = ctx.persister();
  const bool nt = persister.config().flush == persist::FlushInstruction::ntstore;
  const WriteFn write = write_kernel();
  const uint64_t span = stream_span();
  const uint64_t blocks = span / kBlock;
  ctx.set_bytes_per_op(kBlock);
  ctx.run_threads([&](ThreadState& t) {
    std::byte* base = ctx.region().base + span * static_cast<uint64_t>(t.index());
    alignas(64) std::byte source[kBlock];
    for (uint64_t i = 0; i < kBlock; ++i) source[i] = static_cast<std::byte>(i ^ 0x5a);
    t.measure([&](uint64_t i) {
      std::byte* dst = base + (same ? 0 : (i % blocks) * kBlock);
      source[0] = static_cast<std::byte>(i);  // each rewrite carries new data
      if (nt) {
        persister.copy_nt(dst, source, kBlock);
      } else {
        write(dst, source, kBlock);
        persister.flush(dst, kBlock);
      }
      persister.fence();
    });
  });
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "i7_rewrite",
    .summary = "I7: latency of repeated 256 B p-stores to one block versus spread over consecutive blocks",
    .params = {std_params::medium(), adr_param(), std_params::flush({"ntstore", "auto"}),
               std_params::choice("target", "same: every p-store rewrites one 256 B block; spread: consecutive blocks",
                                  {"same", "spread"}, {"same", "spread"}),
               std_params::threads({"1"}, {"1"})},
    .region_bytes = stream_region_bytes,
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
