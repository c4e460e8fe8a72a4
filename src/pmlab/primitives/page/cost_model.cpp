#include "pmlab/primitives/page/cost_model.hpp"

#include <array>
#include <barrier>
#include <mutex>
#include <thread>

#include "pmlab/common/random.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/persist/instructions.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::primitives::page {
namespace {

double fastest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

// ulog's cost relative to cow's, minus one: negative where ulog is cheaper.
double ulog_excess(const FlushCostModel::Sample& s) {
  if (s.ulog_vs_cow > 0) return s.ulog_vs_cow - 1;
  return s.cow_ns > 0 ? (s.ulog_ns - s.cow_ns) / s.cow_ns : 0;
}

// Where ulog stops being cheaper, from samples of one thread count sorted by dirty lines.
double crossing(const std::vector<FlushCostModel::Sample>& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const double excess = ulog_excess(s[i]);
    if (excess < 0) continue;
    if (i == 0) return s[0].dirty;                // cow is cheaper from the first point on
    const double before = ulog_excess(s[i - 1]);  // < 0
    const double span = static_cast<double>(s[i].dirty) - static_cast<double>(s[i - 1].dirty);
    return s[i - 1].dirty + span * (-before) / (excess - before);
  }
  return s.empty() ? 0.0 : static_cast<double>(s.back().dirty) + 1;  // ulog is cheaper everywhere
}

}  // namespace

FlushCostModel FlushCostModel::fixed(double crossover) {
  FlushCostModel m;
  m.crossover_ = {crossover};
  return m;
}

FlushCostModel FlushCostModel::from_samples(std::vector<Sample> samples) {
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return a.threads != b.threads ? a.threads < b.threads : a.dirty < b.dirty;
  });
  FlushCostModel m;
  uint32_t max_threads = 1;
  for (const Sample& s : samples) max_threads = std::max(max_threads, s.threads);
  m.crossover_.assign(max_threads, 0.0);
  for (uint32_t t = 1; t <= max_threads; ++t) {
    std::vector<Sample> mine;
    for (const Sample& s : samples)
      if (s.threads == t) mine.push_back(s);
    m.crossover_[t - 1] = mine.empty() ? (t > 1 ? m.crossover_[t - 2] : 0.0) : crossing(mine);
  }
  m.samples_ = std::move(samples);
  return m;
}

namespace {

// Powers of two and the points halfway between them (1, 2, 3, 4, 6, 8, 12, …) up to `lines`: the
// crossover is interpolated between two neighbours, and the two policies' costs are not linear over an
// octave.
std::vector<uint32_t> dirty_grid(uint32_t lines) {
  std::vector<uint32_t> grid;
  for (uint32_t d = 1; d < lines; d *= 2) {
    grid.push_back(d);
    if (d >= 2 && d + d / 2 < lines) grid.push_back(d + d / 2);
  }
  grid.push_back(lines);
  return grid;
}

// One thread's flush times: [grid point][policy], one mean per round.
using ThreadTimes = std::vector<std::array<std::vector<double>, 2>>;

// The calibration at one thread count: what each thread shares, and what each measures.
class CalibrationStep {
 public:
  CalibrationStep(PageStore& store, std::vector<PageStore::Lane>& lanes, const std::vector<uint32_t>& grid,
                  uint32_t batch, uint32_t rounds, uint32_t threads)
      : store_(store),
        lanes_(lanes),
        grid_(grid),
        batch_(batch),
        rounds_(rounds),
        threads_(threads),
        lines_(store.options().page_size / kLineBytes),
        sync_(threads),
        times_(threads, ThreadTimes(grid.size())) {}

  Status run(const std::vector<int>& cpus) {
    std::vector<std::thread> workers;
    for (uint32_t k = 0; k < threads_; ++k)
      workers.emplace_back([&, k] {
        if (!cpus.empty()) platform::pin_current_thread(cpus[k % cpus.size()]);
        work(k);
      });
    for (auto& w : workers) w.join();
    return failure_;
  }

  // At each grid point, each thread's fastest round: another process taking the CPU only ever adds time,
  // so the fastest of several rounds is the undisturbed cost (timeit's estimator). Averaged over the
  // threads; ulog_vs_cow is the median of the rounds' ratios.
  void add_samples(std::vector<FlushCostModel::Sample>& samples) const {
    for (size_t g = 0; g < grid_.size(); ++g) {
      FlushCostModel::Sample s;
      s.threads = threads_;
      s.dirty = grid_[g];
      for (uint32_t k = 0; k < threads_; ++k) {
        s.cow_ns += fastest(times_[k][g][0]) / threads_;
        s.ulog_ns += fastest(times_[k][g][1]) / threads_;
      }
      std::vector<double> ratios;
      for (uint32_t round = 0; round < rounds_; ++round) {
        double cow_ns = 0, ulog_ns = 0;
        for (uint32_t k = 0; k < threads_; ++k) {
          if (round >= times_[k][g][0].size() || round >= times_[k][g][1].size()) continue;
          cow_ns += times_[k][g][0][round];
          ulog_ns += times_[k][g][1][round];
        }
        if (cow_ns > 0) ratios.push_back(ulog_ns / cow_ns);
      }
      s.ulog_vs_cow = median(ratios);
      samples.push_back(s);
    }
  }

 private:
  void fail(const Status& s) {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    failure_ = s;
  }

  // Calibration times what a flushing workload pays: phases of back-to-back flushes, one policy at a
  // time, each phase after an untimed flush of its own policy (a micro-log flush leaves its record's
  // re-zeroing in flight, which the next flush pays). The pages are read once, at random over this
  // thread's share (their own content: calibration changes versions, never data), and their slots
  // evicted from the CPU cache; from then on every write is non-temporal, as in the workload. Timing
  // each flush right after reading its page would hide that deferred work and cache the slots, and
  // misplace the crossover (docs/primitives.md, "Calibration").
  std::vector<DramPage> read_frames(uint32_t k, uint64_t& mix, bool& failed) {
    const uint64_t own = std::max<uint64_t>(1, store_.options().pages / threads_);
    std::vector<DramPage> frames;
    for (uint32_t f = 0; f <= batch_ && !failed; ++f) {
      frames.emplace_back(store_.options().page_size);
      if (Status s = store_.read(k + (splitmix64(mix) % own) * threads_, frames.back()); !s) {
        fail(s);
        failed = true;
      }
    }
    for (const DramPage& frame : frames) {
      const std::span<const std::byte> slot = store_.page_bytes(frame.pid);
      for (size_t o = 0; o < slot.size(); o += kLineBytes) persist::isa::clflush(slot.data() + o);
    }
    return frames;
  }

  void work(uint32_t k) {
    CowFlusher cow(store_);
    MicroLogFlusher ulog(store_);
    PageFlusher* flushers[2] = {&cow, &ulog};
    const platform::Clock& clock = platform::Clock::get();
    uint64_t mix = 0x9e3779b97f4a7c15ULL * (k + 1);
    bool failed = false;
    std::vector<DramPage> frames = read_frames(k, mix, failed);
    std::vector<uint32_t> order(lines_);
    for (uint32_t j = 0; j < lines_; ++j) order[j] = j;
    // Rounds outermost: a change of the machine's speed mid-calibration then reaches every point alike.
    for (uint32_t round = 0; round < rounds_; ++round) {
      for (size_t g = 0; g < grid_.size(); ++g) {
        for (int i = 0; i < 2; ++i) {
          const int policy = (round % 2 == 0) ? i : 1 - i;  // alternate which policy goes first
          sync_.arrive_and_wait();
          if (failed) continue;
          for (DramPage& frame : frames) {
            for (uint32_t j = 0; j < grid_[g]; ++j) {  // a partial Fisher-Yates shuffle: distinct lines
              std::swap(order[j], order[j + splitmix64(mix) % (lines_ - j)]);
              frame.mark_dirty(order[j]);
            }
          }
          uint64_t t0 = 0;
          for (size_t f = 0; f < frames.size() && !failed; ++f) {
            if (f == 1) t0 = platform::Clock::start();
            if (Status s = flushers[policy]->flush(lanes_[k], frames[f]); !s) {
              fail(s);
              failed = true;
            }
          }
          if (!failed) times_[k][g][policy].push_back(clock.to_ns(platform::Clock::stop() - t0) / batch_);
        }
      }
    }
  }

  PageStore& store_;
  std::vector<PageStore::Lane>& lanes_;
  const std::vector<uint32_t>& grid_;
  const uint32_t batch_, rounds_, threads_, lines_;
  std::barrier<> sync_;
  std::vector<ThreadTimes> times_;
  std::mutex failure_mutex_;
  Status failure_;
};

}  // namespace

Result<FlushCostModel> FlushCostModel::calibrate(PageStore& store, uint32_t max_threads,
                                                 const CalibrationOptions& options) {
  const uint64_t pages = store.options().pages;
  if (max_threads == 0) return error(Errc::invalid_argument, "calibration needs at least one thread");
  if (pages < max_threads)
    return error(Errc::invalid_argument, "calibrating " + std::to_string(max_threads) +
                                             " threads needs as many pages; the store has " + std::to_string(pages));
  if (options.rounds == 0) return error(Errc::invalid_argument, "calibration needs at least one round");
  const uint64_t auto_batch = std::max<uint64_t>(8, CalibrationOptions::kAutoBatchBytes / store.options().page_size);
  const uint32_t batch = options.flushes_per_batch > 0 ? options.flushes_per_batch : static_cast<uint32_t>(auto_batch);
  std::vector<PageStore::Lane> lanes;
  for (uint32_t k = 0; k < max_threads; ++k) {
    auto lane = store.claim_lane();
    if (!lane)
      return error(Errc::busy, "calibrating " + std::to_string(max_threads) + " threads: " + lane.status().message());
    lanes.push_back(std::move(*lane));
  }
  const std::vector<uint32_t> grid = dirty_grid(store.options().page_size / kLineBytes);
  const std::vector<int> cpus = platform::allowed_cpus();
  const uint64_t started = platform::Clock::now();
  std::vector<Sample> samples;
  for (uint32_t t = 1; t <= max_threads; ++t) {
    CalibrationStep step(store, lanes, grid, batch, options.rounds, t);
    if (Status failure = step.run(cpus); !failure) return error(failure.code(), "calibration: " + failure.message());
    step.add_samples(samples);
  }
  FlushCostModel model = from_samples(std::move(samples));
  model.seconds_ = platform::Clock::get().to_ns(platform::Clock::now() - started) / 1e9;
  return model;
}

}  // namespace pmlab::primitives::page
