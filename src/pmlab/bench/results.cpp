#include "pmlab/bench/results.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "pmlab/bench/context.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::bench {

namespace fs = std::filesystem;

nlohmann::ordered_json base_context(const std::string& run_id, const std::string& command_line, bool quick) {
  nlohmann::ordered_json ctx;
  ctx["run_id"] = run_id;
  ctx["date"] = iso8601_now();
  ctx["command_line"] = command_line;
  ctx["quick"] = quick;
  const nlohmann::ordered_json machine = machine_context();
  for (const auto& [k, v] : machine.items()) ctx[k] = v;
  return ctx;
}

uint64_t context_hash(const nlohmann::ordered_json& shaping) {
  const std::string text = json_text(shaping);
  return fnv1a64(text.data(), text.size());
}

std::string run_hash(const std::string& run_name, uint64_t context_hash) {
  return hex64(fnv1a64(run_name.data(), run_name.size(), context_hash));
}

Status check_out_dir(const fs::path& out, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return Status::success();
  if (!fs::is_directory(out, ec))
    return error(Errc::not_a_file, "--out " + out.string() + " exists and is not a directory");
  for (const char* name : {"results.json", "report.html"}) {
    if (!force && fs::exists(out / name, ec))
      return error(Errc::already_exists, "--out " + out.string() + " already holds " + name +
                                             "; choose a new directory, or pass --force to replace its results "
                                             "(the old report is removed with them)");
  }
  return Status::success();
}

Result<fs::path> make_default_run_directory(const std::string& name) {
  std::error_code ec;
  fs::create_directories("results", ec);
  if (ec) return errno_status(ec.value(), "cannot create results");
  // mkdir either makes the directory or finds it taken: two runs never share one.
  for (unsigned n = 1;; ++n) {
    const fs::path path = fs::path("results") / (n == 1 ? name : name + "-" + std::to_string(n));
    if (::mkdir(path.c_str(), 0777) == 0) return path;
    if (errno != EEXIST) return errno_status(errno, "cannot create " + path.string());
  }
}

RemovedIfEmpty::~RemovedIfEmpty() {
  std::error_code ec;
  if (!path.empty()) fs::remove(path, ec);
}

Result<std::string> ResultsDocument::write(const fs::path& out, bool force) const {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["pmlab_version"] = kPmlabVersion;
  doc["context"] = context_;
  doc["runs"] = runs_;
  if (!checks_.is_null()) doc["checks"] = checks_;
  std::error_code ec;
  const bool out_existed = fs::exists(out, ec);
  fs::create_directories(out, ec);
  if (ec) return errno_status(ec.value(), "cannot create " + out.string());
  const fs::path file = out / "results.json";
  if (Status s = write_file_atomically(file.string(), json_text(doc, 1) + "\n"); !s) {
    if (!out_existed) fs::remove(out, ec);  // no empty run directory left behind (removes only an empty one)
    return s;
  }
  if (force) fs::remove(out / "report.html", ec);
  return file.string();
}

}  // namespace pmlab::bench
