// primitives.ycsb_write: YCSB with 100% updates on a DRAM-resident table that logs every update through
// a log writer before applying it ([PMemIO] §3.3.2: "Running a write-heavy (100%) YCSB benchmark on a
// single thread with a DRAM-resident table"). A transaction: latch the record, append the redo entry
// (key, field, new 100-byte value) durably, update the field, unlatch. Keys are YCSB's scrambled
// zipfian (workload/), drawn before the timed loop.
#include <atomic>
#include <cstring>

#include "pmlab/bench/pausable_loop.hpp"
#include "pmlab/suites/primitives/common.hpp"
#include "pmlab/pmdk/log_blk.hpp"
#include "pmlab/workload/random.hpp"
#include "pmlab/workload/scrambled_zipfian.hpp"

namespace pmlab::suites::primitives {
namespace {

using namespace bench;

constexpr uint32_t kFields = 10;
constexpr uint32_t kFieldBytes = 100;  // YCSB's default record: 10 fields of 100 bytes
constexpr size_t kKeysPerThread = size_t{1} << 18;
constexpr const char* kPaperSource = "[PMemIO] §3.3.2 (HyMem, 1 thread, Optane DC PMM prototype)";

struct Update {
  uint64_t key;
  uint32_t field;
  uint32_t reserved;
  std::byte value[kFieldBytes];
};

class Table {
 public:
  explicit Table(uint64_t records)
      : rows_(records * kFields * kFieldBytes), latches_(std::make_unique<std::atomic<bool>[]>(records)) {}
  void latch(uint64_t key) noexcept {
    while (latches_[key].exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
  }
  void unlatch(uint64_t key) noexcept { latches_[key].store(false, std::memory_order_release); }
  void apply(const Update& u) noexcept {
    std::memcpy(&rows_[(u.key * kFields + u.field) * kFieldBytes], u.value, kFieldBytes);
  }

 private:
  std::vector<std::byte> rows_;  // value-initialized: every page touched before the timed loop
  std::unique_ptr<std::atomic<bool>[]> latches_;
};

// One transaction of thread `lane`, with `append` the durable log append; false when the log was full.
template <class Append>
bool transact(Table& table, const std::vector<uint64_t>& keys, const std::vector<std::byte>& values, uint64_t i,
              Append&& append) {
  Update u;
  u.key = keys[i & (kKeysPerThread - 1)];
  u.field = static_cast<uint32_t>(i % kFields);
  u.reserved = 0;
  std::memcpy(u.value, &values[(i % 16) * kFieldBytes], kFieldBytes);
  table.latch(u.key);
  const bool logged = append(u);
  if (logged) table.apply(u);
  table.unlatch(u.key);
  return logged;
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const int threads = ctx.threads();
  const auto records = static_cast<uint64_t>(p.integer("records"));
  Table table(records);
  const workload::ScrambledZipfianGenerator zipf(0, records - 1);
  std::vector<std::vector<uint64_t>> keys(static_cast<size_t>(threads), std::vector<uint64_t>(kKeysPerThread));
  for (int t = 0; t < threads; ++t) {
    workload::Random rng(0x5c5b + static_cast<uint64_t>(t));
    for (uint64_t& key : keys[static_cast<size_t>(t)]) key = zipf.next(rng);
  }
  const std::vector<std::byte> values = random_bytes(16 * kFieldBytes, 0x7a1e);
  std::vector<LoopResult> results(static_cast<size_t>(threads));
  std::barrier<> sync(threads);

  auto run = [&](Maintenance& maintenance, auto&& append) {
    ctx.run_threads([&](ThreadState& t) {
      const auto& mine = keys[static_cast<size_t>(t.index())];
      results[static_cast<size_t>(t.index())] = pausable_loop(
          ctx.control(), sync, maintenance, batches_of([&](uint64_t i) {
            return transact(table, mine, values, i, [&](const Update& u) { return append(t.index(), u); });
          }));
    });
    record_loops(ctx, results, 0);
  };

  if (p.text("writer") == kPmemLog) {
    auto peer = prefaulted_peer(ctx, "libpmemlog", [&](const std::string& dir) {
      return pmdk::PmemLog::create(dir, kLaneBytes * static_cast<uint64_t>(threads));
    });
    const auto model_sees_peer = peer_persistence_seen_by_model(ctx);
    Maintenance rewind(threads, [&] { peer->rewind(); });
    run(rewind, [&](int, const Update& u) { return peer->append(&u, sizeof u); });
    record_peer_counters(ctx, pmdk::kPmemLogFencesPerAppend);
  } else {
    const plog::Options options = log_options(p, static_cast<uint32_t>(threads));
    prefault(ctx.region().base, ctx.region().size);
    auto log = plog::Log::format({ctx.region().base, ctx.region().size}, ctx.persister(), options);
    if (!log) ctx.fail(log.status().message());
    Maintenance truncate(threads, [&] {
      if (Status s = (*log)->truncate(); !s) throw std::runtime_error(s.message());
    });
    run(truncate, [&](int lane, const Update& u) {
      auto lsn = (*log)->append(static_cast<uint32_t>(lane), &u, sizeof u);
      if (!lsn && lsn.status().code() != Errc::pool_full) throw std::runtime_error(lsn.status().message());
      return lsn.ok();
    });
  }
  ctx.metric("entry_payload_bytes", sizeof(Update), "B");
  // The paper's numbers beside ours, for its three writers on one thread.
  const std::string& writer = p.text("writer");
  const double paper = writer == "zero" ? 2.0e6 : writer == "header" ? 1.7e6 : writer == "classic" ? 1.5e6 : 0;
  if (paper > 0 && threads == 1) {
    ctx.metric("published_throughput", paper, "ops/s", MetricKind::published, kPaperSource);
  }
}

ParamSpec records_param() {
  return std_params::integer("records", "records in the DRAM table (10 fields of 100 bytes each)", {"100000"}, {}, 1,
                             100000000);
}

const CaseRegistration registration{CaseDef{
    .suite = "primitives",
    .name = "ycsb_write",
    .summary = "YCSB 100% updates on a DRAM table, each update logged durably through a writer ([PMemIO] §3.3.2)",
    .params = {medium_param(), std_params::domain(), std_params::flush(), writer_param(), padding_param(),
               stores_param(), records_param(), std_params::threads({"1", "2"})},
    .region_bytes =
        [](const Params& p) {
          const auto threads = static_cast<uint32_t>(p.integer("threads"));
          if (p.text("writer") == kPmemLog) return uint64_t{4096};
          return plog::Log::region_bytes(log_options(p, threads), kLaneBytes);
        },
    .redundant = pmemlog_options_are_redundant,
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::primitives
