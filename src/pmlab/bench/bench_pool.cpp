#include "pmlab/bench/bench_pool.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "pmlab/common/files.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/scratch.hpp"

namespace pmlab::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBenchLayout = "bench";

// Benchmarks use the pool's data area as scratch memory: nothing to recover.
[[maybe_unused]] const bool bench_layout_registered = pool::LayoutRegistry::instance().add(
    {kBenchLayout, 1, "scratch memory for benchmarks (no persistent structure, nothing to recover)", {}, {}});

}  // namespace

Status BenchPool::open(const RunOptions& options, const std::vector<PlannedRun>& plan) {
  path_ = options.pool_path.empty() ? pool::scratch_pool_path(scratch_base_directory()) : options.pool_path;
  // The cases put their side pools beside the run's pool: a killed run's are swept wherever that was, and
  // its scratch directories (a traced program's pool and trace) under the scratch base.
  const auto print = [](const std::string& line) { std::fprintf(stderr, "%s\n", printable(line).c_str()); };
  pool::sweep_scratch_pools(fs::path(path_).parent_path(), print);
  sweep_scratch_directories(scratch_base_directory(), print);
  if (std::none_of(plan.begin(), plan.end(), uses_pool)) return Status::success();
  std::error_code ec;
  if (fs::exists(path_, ec) || fs::is_symlink(path_, ec)) {
    pool::OpenOptions open_options;
    open_options.layout = kBenchLayout;
    auto opened = pool::Pool::open(path_, open_options);
    if (!opened) return opened.status();
    pool_ = std::move(*opened);
    media::prefault_for_writing(pool_->data(), pool_->data_size());
    return Status::success();
  }
  const uint64_t size =
      options.pool_size ? options.pool_size : pool_bytes_for(plan, options.quick, options.repetitions);
  // A pool made at a path the user named is theirs to keep; the default scratch pool goes with the run.
  remove_ = options.pool_path.empty() && !options.keep_pool;
  if (remove_) StopSignals::set_file_to_remove(path_);
  auto made = pool::Pool::create(path_, size, kBenchLayout);
  if (!made) return made.status();
  pool_ = std::move(*made);
  media::prefault_for_writing(pool_->data(), pool_->data_size());
  created_ = true;
  return Status::success();
}

BenchPool::~BenchPool() {
  pool_.reset();
  if (created_ && remove_) (void)pool::remove(path_, pool::RemoveMode::damaged_too);
  StopSignals::set_file_to_remove("");
}

}  // namespace pmlab::bench
