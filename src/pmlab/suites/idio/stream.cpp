#include "pmlab/suites/idio/stream.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/peers.hpp"

namespace pmlab::suites::idio {

using namespace bench;

namespace {
constexpr auto kStreamOps = enum_names<StreamOp>(
    "stream operation", {{StreamOp::load, "load"}, {StreamOp::store, "store"}, {StreamOp::pstore, "pstore"}});
}  // namespace

StreamOp parse_stream_op(const std::string& text) {
  auto op = kStreamOps.parse(text);
  if (!op) throw std::invalid_argument(op.status().message());
  return *op;
}

const char* to_string(StreamOp op) noexcept { return kStreamOps.name(op); }

StreamJob stream_job(const bench::Params& params, StreamOp op) {
  StreamJob job;
  job.op = op;
  job.pattern = params.has("pattern") ? bench::parse_pattern(params.text("pattern")) : bench::Pattern::seq;
  job.size = params.size("size");
  job.span = stream_span();
  return job;
}

uint64_t stream_region_bytes(const Params& p) {
  return stream_span() * static_cast<uint64_t>(p.has("threads") ? p.integer("threads") : 1);
}

CaseDef stream_case(std::string name, std::string summary, std::optional<StreamOp> op, std::vector<ParamSpec> params,
                    std::function<std::optional<std::string>(const Params&)> redundant) {
  params.push_back(fio_param());
  return CaseDef{
      .suite = kSuite,
      .name = std::move(name),
      .summary = std::move(summary),
      .params = std::move(params),
      .region_bytes = stream_region_bytes,
      .redundant = std::move(redundant),
      .body =
          [op](RunContext& ctx) {
            run_stream(ctx, stream_job(ctx.params(), op ? *op : parse_stream_op(ctx.params().text("op"))));
          },
  };
}

namespace {

constexpr uint64_t kSourceBytes = 4096;

struct AlignedFree {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};

// One thread's operations and the ticks they took from its first to its last.
struct Span {
  uint64_t ops = 0, start = 0, end = 0;
};

// The same figure the harness records as `bandwidth`, kept for the comparisons of the cases that call
// run_stream.
double mib_per_s(const std::vector<Span>& spans, uint64_t size) {
  uint64_t ops = 0, first = UINT64_MAX, last = 0;
  for (const Span& s : spans) {
    ops += s.ops;
    first = std::min(first, s.start);
    last = std::max(last, s.end);
  }
  const double seconds = platform::Clock::get().to_ns(last - first) / 1e9;
  return seconds > 0 ? static_cast<double>(ops * size) / seconds / 1048576.0 : 0.0;
}

// fio's libpmem engine on the same job, recorded beside ours (fio=on).
void fio_beside(RunContext& ctx, const StreamJob& job, bool nt, double mib_s) {
  FioJob fio;
  fio.op = job.op;
  fio.nontemporal = nt;
  fio.pattern = job.pattern;
  fio.size = job.size;
  fio.threads = ctx.threads();
  fio.span = job.span;
  fio.duration_s = std::max(0.2, ctx.control().duration_s);
  record_fio_beside(ctx, fio, ctx.region().base, mib_s);
}

}  // namespace

double run_stream(RunContext& ctx, const StreamJob& job) {
  const uint64_t size = job.size;
  if (size % 64 != 0) ctx.fail("access size must be a multiple of 64 bytes (whole cache lines)");
  if (job.span < size || (job.base == nullptr && ctx.region().size < job.span * static_cast<uint64_t>(ctx.threads())))
    ctx.fail("region too small for the access size and thread count");
  std::byte* const memory = job.base != nullptr ? job.base : ctx.region().base;
  const persist::Persister& persister = job.persister != nullptr ? *job.persister : ctx.persister();
  const bool nt = persister.config().flush == persist::FlushInstruction::ntstore;
  const ReadFn read = read_kernel();
  const WriteFn write = write_kernel();
  MemoryModel* model = ctx.model();

  ctx.control().per_op_timing = false;
  ctx.set_bytes_per_op(static_cast<double>(size));
  std::vector<Span> spans(static_cast<size_t>(ctx.threads()));
  ctx.run_threads([&](ThreadState& t) {
    if (!job.cpus.empty()) platform::pin_current_thread(job.cpus[static_cast<size_t>(t.index()) % job.cpus.size()]);
    std::byte* base = memory + job.span * static_cast<uint64_t>(t.index());
    const auto offsets = stream_offsets(job.pattern, job.span, size, 0x5eed + static_cast<uint64_t>(t.index()));
    const size_t mask = offsets.size() - 1;
    // Writes copy from a source small enough to stay in L1 (chunk by chunk for larger accesses): a 64 KiB
    // source would sit in L2 and its loads would cost measurable store bandwidth (docs/idio.md), i.e. we
    // would measure ourselves, not the memory.
    const uint64_t chunk = std::min<uint64_t>(size, kSourceBytes);
    std::unique_ptr<std::byte, AlignedFree> source(static_cast<std::byte*>(std::aligned_alloc(64, chunk)));
    for (size_t i = 0; i < chunk; ++i) source.get()[i] = static_cast<std::byte>(i * 131 + 7);
    const std::byte* src = source.get();
    uint64_t sink = 0;
    // A pool's pages are mapped on first touch: fault them in now, not inside the timed loop.
    for (uint64_t o = 0; o < job.span; o += 4096) sink += load_word(base + o);
    switch (job.op) {
      case StreamOp::load:
        t.measure([&](uint64_t i) {
          const std::byte* p = base + offsets[i & mask];
          sink ^= read(p, size);
          if (model != nullptr) [[unlikely]]
            model->on_read(p, size);
        });
        break;
      case StreamOp::store:
        t.measure([&](uint64_t i) {
          std::byte* p = base + offsets[i & mask];
          for (uint64_t c = 0; c < size; c += chunk) write(p + c, src, chunk);
          if (model != nullptr) [[unlikely]]
            model->on_evict(p, size);
        });
        break;
      case StreamOp::pstore:
        if (nt) {
          t.measure([&](uint64_t i) {
            std::byte* p = base + offsets[i & mask];
            for (uint64_t c = 0; c < size; c += chunk) persister.copy_nt(p + c, src, chunk);
            persister.fence();
          });
        } else {
          t.measure([&](uint64_t i) {
            std::byte* p = base + offsets[i & mask];
            for (uint64_t c = 0; c < size; c += chunk) write(p + c, src, chunk);
            persister.flush(p, size);
            persister.fence();
          });
        }
        break;
    }
    __asm__ volatile("" : : "r"(sink));
    spans[static_cast<size_t>(t.index())] = {t.ops(), t.start_tick(), t.end_tick()};
  });

  const double mib_s = mib_per_s(spans, size);
  if (ctx.params().has("fio") && ctx.params().text("fio") == "on") fio_beside(ctx, job, nt, mib_s);
  return mib_s;
}

}  // namespace pmlab::suites::idio
