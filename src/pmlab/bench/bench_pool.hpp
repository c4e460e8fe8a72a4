// The pool of one `pmlab run`, when any run needs it: opened once and locked for the whole run; a pool
// pmlab created is removed at the end (also on a stop signal) unless --keep-pool. Internal to bench/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pmlab/bench/run_plan.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::bench {

class BenchPool {
 public:
  Status open(const RunOptions& options, const std::vector<PlannedRun>& plan);
  ~BenchPool();
  pool::Pool* get() const noexcept { return pool_.get(); }
  bool created() const noexcept { return created_; }

 private:
  std::string path_;
  std::unique_ptr<pool::Pool> pool_;
  bool created_ = false;
  bool remove_ = false;
};

}  // namespace pmlab::bench
