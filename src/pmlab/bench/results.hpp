// results.json, written by one writer for every command that measures (`pmlab run`, `pmlab crash`, `pmlab
// crash merge`): the same context block, the same config hashes, the same run records, written whole or not
// at all. docs/results-schema.md describes the document.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"
#include "pmlab/record/record.hpp"

namespace pmlab::bench {

// The context every results.json starts from: run id, date, command line, --quick, and the machine
// (bench/context.hpp). The command adds what shaped its numbers (pool, domain, run control, crash settings).
nlohmann::ordered_json base_context(const std::string& run_id, const std::string& command_line, bool quick);

// The hash of what shapes the numbers, so rows from different setups never join by accident; written as
// context.config_hash. A run's own hash is run_hash(name, context hash).
uint64_t context_hash(const nlohmann::ordered_json& shaping);
std::string run_hash(const std::string& run_name, uint64_t context_hash);

// A run directory that already holds results would end up with new results beside an old report:
// refused unless `force`.
Status check_out_dir(const std::filesystem::path& out, bool force);

// Makes results/<name> for a run given no --out, new to that run: with "-2", "-3", … where another run
// has the name (run ids tell seconds apart, and two runs may start in one second).
Result<std::filesystem::path> make_default_run_directory(const std::string& name);

// Removes `path` when it goes, if it is an empty directory then (removing one that is not fails, harmlessly).
struct RemovedIfEmpty {
  std::filesystem::path path;
  ~RemovedIfEmpty();
};

class ResultsDocument {
 public:
  explicit ResultsDocument(nlohmann::ordered_json context) : context_(std::move(context)) {}

  nlohmann::ordered_json& context() noexcept { return context_; }
  void add(const record::RunRecord& r) { runs_.push_back(record::to_json(r)); }
  // A record read back from another results.json (crash merge): kept as it was written.
  void add_json(nlohmann::ordered_json run) { runs_.push_back(std::move(run)); }
  size_t size() const noexcept { return runs_.size(); }
  // The checks over the runs (bench/checks.hpp), written as `checks` beside `runs`.
  void set_checks(nlohmann::ordered_json checks) { checks_ = std::move(checks); }

  // Writes `out`/results.json atomically (the old file stays on any error); creates `out`, and removes it
  // again when it was created for nothing. With `force` an old report.html, which described the old
  // results, is removed. Returns the file's path.
  Result<std::string> write(const std::filesystem::path& out, bool force = false) const;

 private:
  nlohmann::ordered_json context_;
  std::vector<nlohmann::ordered_json> runs_;
  nlohmann::ordered_json checks_;
};

}  // namespace pmlab::bench
