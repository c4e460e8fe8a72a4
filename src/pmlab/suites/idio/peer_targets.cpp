// The suite measures the memory, not itself: our loops beside the peer tools, in the same run, with the
// targets (ours / peer) as ratio metrics.
//   idio.vs_likwid  sequential 64 KiB load / nt-store bandwidth, 1 thread and all CPUs, against
//                   likwid-bench's load_* / store_mem_* kernels: ours / likwid >= 0.9. Both sides on the
//                   same page size: `pages=huge` gives ours a 2 MiB-page buffer and likwid glibc's huge-page
//                   malloc; `pages=base` both 4 KiB pages (ours on the pool for medium=pool). On 4 KiB
//                   pages a stream's bandwidth varies from one buffer to the next, for both tools (page
//                   walks, and which physical pages the buffer got); 2 MiB pages vary far less (docs/idio.md).
//   idio.vs_fio     256 B p-stores against fio's libpmem engine on a file beside the pool: ours / fio >= 2
//                   (fio's per-I/O overhead dominates there).
// Against likwid, each side runs eleven short rounds, alternating, and its best round counts: other load
// on the machine (in a VM, also the host's memory bandwidth, which can swing from one second to the next)
// only ever lowers a bandwidth, and more, shorter rounds give each side more chances to meet a quiet
// moment than a few long ones. Against fio, ours is measured before and after fio and averaged, which can
// only understate ours. A peer that is missing or fails makes the run skipped, with its reason.
#include <gnu/libc-version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/peers.hpp"
#include "pmlab/suites/idio/stream.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

constexpr double kLikwidTarget = 0.9;
constexpr double kFioTarget = 2.0;
constexpr uint64_t kLargeAccess = 64 << 10;
constexpr int kLikwidRounds = 11;

// Long enough that a moment of other load on the machine does not decide the ratio.
double peer_seconds(const RunContext& ctx) { return ctx.quick() ? 0.3 : 1.0; }
double likwid_round_seconds(const RunContext& ctx) { return ctx.quick() ? 0.12 : 0.4; }

// glibc's malloc advises huge pages on request from 2.35 on (glibc.malloc.hugetlb); likwid-bench shares
// this process's glibc, as both come from the system.
bool glibc_can_give_likwid_huge_pages() {
  int major = 0, minor = 0;
  return std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
         (major > 2 || (major == 2 && minor >= 35));
}

void vs_likwid(RunContext& ctx) {
  const Params& p = ctx.params();
  const bool load = p.text("kernel") == "load";
  const LikwidKind kind = load ? LikwidKind::load : LikwidKind::ntstore;
  if (!find_program("likwid-bench")) ctx.skip("likwid-bench not found in PATH (Debian package likwid)");
  persist::Config nt_config{persist::Domain::adr, persist::FlushInstruction::ntstore, false, false};
  auto nt = ctx.persister().derive(nt_config);
  if (!nt) ctx.skip(nt.status().message());

  StreamJob job;
  job.op = load ? StreamOp::load : StreamOp::pstore;
  job.pattern = Pattern::seq;
  job.size = kLargeAccess;
  job.span = stream_span();
  job.persister = &*nt;
  // On DRAM, ours runs on memory allocated for the comparison with the chosen page size, as likwid-bench
  // allocates its own for each run.
  const bool huge = p.text("pages") == "huge";
  if (huge && !glibc_can_give_likwid_huge_pages())
    ctx.skip(std::string("glibc ") + gnu_get_libc_version() +
             " cannot give likwid-bench huge pages (glibc.malloc.hugetlb needs 2.35): see pages=base");
  media::DramBuffer own;
  if (ctx.region().kind == media::Kind::dram || huge) {
    const media::Pages pages = huge ? media::Pages::huge : media::Pages::base;
    if (Status s = own.reserve(job.span * static_cast<uint64_t>(ctx.threads()), pages); !s) ctx.fail(s.message());
    job.base = own.region().base;
    const double huge_fraction =
        static_cast<double>(media::mapping_pages(job.base).huge_bytes) / static_cast<double>(own.region().size);
    ctx.metric("huge_page_fraction", huge_fraction, "ratio");
    if (huge && huge_fraction < 0.5)
      ctx.skip("the kernel gave " + std::to_string(static_cast<int>(huge_fraction * 100)) +
               "% of the buffer huge pages (transparent_hugepage: " + platform::transparent_hugepages() + ")");
  }
  ctx.control().duration_s = likwid_round_seconds(ctx);
  // Rounds alternate; the best of each side counts: other load on the machine can only lower a
  // bandwidth, so the best round is each side's capability, and alternation spreads drift over both.
  std::vector<double> ours, theirs;
  const uint64_t bytes = job.span * static_cast<uint64_t>(ctx.threads());
  for (int round = 0; round < kLikwidRounds; ++round) {
    ours.push_back(run_stream(ctx, job));
    // As many sweeps over the working set as take likwid as long as our round took.
    const double sweeps = likwid_round_seconds(ctx) * ours.back() * 1048576.0 / static_cast<double>(bytes);
    auto likwid = run_likwid(kind, ctx.threads(), bytes, static_cast<uint64_t>(std::ceil(sweeps)), huge);
    if (!likwid) ctx.skip(likwid.status().message());
    theirs.push_back(*likwid);
  }
  const double best_ours = *std::max_element(ours.begin(), ours.end());
  const double best_theirs = *std::max_element(theirs.begin(), theirs.end());
  for (int round = 0; round < kLikwidRounds; ++round) {
    ctx.metric("bandwidth_round" + std::to_string(round + 1), ours[static_cast<size_t>(round)], "MiB/s");
    ctx.metric("likwid_bandwidth_round" + std::to_string(round + 1), theirs[static_cast<size_t>(round)], "MiB/s");
  }
  ctx.metric("bandwidth", best_ours, "MiB/s");
  ctx.metric("likwid_bandwidth", best_theirs, "MiB/s");
  ctx.metric("ratio_vs_likwid", best_ours / best_theirs, "ratio");
  ctx.target("ratio_vs_likwid", kLikwidTarget, TargetDirection::at_least, "bandwidth vs likwid-bench's");
  ctx.note("peer",
           "likwid-bench -t " + likwid_kernel(kind) + " over " + std::to_string(job.span >> 20) +
               " MiB per thread, sized to run as long as ours; ours: " + read_kernel_name() + " " +
               (load ? "loads" : "nt-stores + fence") + " of 64 KiB; best of " + std::to_string(kLikwidRounds) +
               " alternating rounds each; " +
               (huge ? "2 MiB pages on both sides (ours: MADV_HUGEPAGE; likwid: GLIBC_TUNABLES=glibc.malloc.hugetlb=1)"
                     : "4 KiB pages on both sides"));
}

void vs_fio(RunContext& ctx) {
  const Params& p = ctx.params();
  if (!find_program("fio")) ctx.skip("fio not found in PATH (Debian package fio)");
  StreamJob job = stream_job(p, StreamOp::pstore);
  ctx.control().duration_s = peer_seconds(ctx);
  const double before = run_stream(ctx, job);
  FioJob fio;
  fio.op = job.op;
  fio.nontemporal = ctx.persister().config().flush == persist::FlushInstruction::ntstore;
  fio.pattern = job.pattern;
  fio.size = job.size;
  fio.threads = ctx.threads();
  fio.span = job.span;
  fio.duration_s = peer_seconds(ctx);
  fio.directory = directory_beside(ctx.region().base);
  auto theirs = run_fio(fio);
  if (!theirs) ctx.skip("fio: " + theirs.status().message());
  const double after = run_stream(ctx, job);
  const double ours = (before + after) / 2;
  ctx.metric("bandwidth", ours, "MiB/s");
  ctx.metric("bandwidth_before_peer", before, "MiB/s");
  ctx.metric("bandwidth_after_peer", after, "MiB/s");
  ctx.metric("fio_bandwidth", *theirs, "MiB/s");
  ctx.metric("ratio_vs_fio", ours / *theirs, "ratio");
  ctx.target("ratio_vs_fio", kFioTarget, TargetDirection::at_least, "p-store bandwidth vs fio's libpmem engine");
  ctx.note("peer", std::string("fio --ioengine=libpmem --direct=") + (fio.nontemporal ? "1" : "0") +
                       " --sync=1 --bs=" + std::to_string(fio.size) + " --numjobs=" + std::to_string(fio.threads) +
                       ", files in " + fio.directory);
}

// Each peer allocates its memory itself (likwid-bench its buffer, fio its file), and neither can be bound
// to a NUMA node from here: a numa:N point would compare node N's memory with wherever theirs landed.
std::optional<std::string> peer_on_a_node(const Params& p) {
  const auto medium = media::parse_medium(p.text("medium"));
  if (medium && medium->kind == media::Kind::numa)
    return std::string("the peer allocates its own memory, which is not bound to a node: compared on dram and pool");
  return std::nullopt;
}

// likwid-bench allocates DRAM of its own: --quick compares on DRAM only.
// The pool's pages are its file system's: huge pages are compared on DRAM only.
std::optional<std::string> likwid_redundant(const Params& p) {
  if (p.text("pages") == "huge" && p.text("medium") == "pool") return "the pool's page size is its file system's";
  return peer_on_a_node(p);
}

ParamSpec likwid_medium() {
  ParamSpec m = std_params::medium();
  m.quick = {"dram"};
  return m;
}

// fio gets a file beside the pool ("the same file" as far as fio's engine allows): --quick on the pool only.
ParamSpec fio_medium() {
  ParamSpec m = std_params::medium();
  m.quick = {"pool"};
  return m;
}

const CaseRegistration likwid_registration{CaseDef{
    .suite = kSuite,
    .name = "vs_likwid",
    .summary = "our sequential 64 KiB load / nt-store bandwidth beside likwid-bench's kernels (target ratio >= 0.9)",
    .params = {likwid_medium(),
               std_params::choice("kernel",
                                  "load: vector loads (likwid load_*); ntstore: nt-stores (likwid store_mem_*)",
                                  {"load", "ntstore"}, {"load", "ntstore"}),
               std_params::choice("pages", "page size on both sides: huge (2 MiB, THP) or base (4 KiB)",
                                  {"huge", "base"}, {"huge"}),
               std_params::threads(thread_ends(), thread_ends())},
    // DRAM runs bring their own buffer.
    .region_bytes = [](const Params& p) { return p.text("medium") == "dram" ? 0 : stream_region_bytes(p); },
    .redundant = likwid_redundant,
    .body = vs_likwid,
}};

const CaseRegistration fio_registration{CaseDef{
    .suite = kSuite,
    .name = "vs_fio",
    .summary = "our p-store bandwidth beside fio's libpmem engine on the same job (target ratio >= 2 at 256 B)",
    .params = {fio_medium(), adr_param(), std_params::flush({"ntstore", "auto"}),
               std_params::choice("pattern", "seq: consecutive; rand: a random permutation of size-aligned slots",
                                  {"seq", "rand"}, {"seq"}),
               std_params::size("size", "bytes per write", {"256", "4096"}, {"256"}, 64, 1 << 20),
               std_params::threads(thread_ends(), thread_ends())},
    .region_bytes = stream_region_bytes,
    .redundant = peer_on_a_node,
    .body = vs_fio,
}};

}  // namespace
}  // namespace pmlab::suites::idio
