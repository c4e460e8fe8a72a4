// `pmlab crash exec` run as a user runs it, and what it left: for the tests of exec mode end to end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/platform/process.hpp"
#include "temp_dir.hpp"

namespace pmlab::testing {

struct ExecOutcome {
  std::string out;  // the run directory
  int exit_code = -1;
  std::string err;
  nlohmann::json results;

  // The run of `granularity` (of the first domain that has one); null when there is none.
  const nlohmann::json* run(const std::string& granularity, const std::string& domain = "") const {
    for (const auto& r : results["runs"])
      if (r["params"]["granularity"] == granularity && (domain.empty() || r["params"]["domain"] == domain)) return &r;
    return nullptr;
  }
  uint64_t metric(const std::string& granularity, const std::string& name, const std::string& domain = "") const {
    const nlohmann::json* r = run(granularity, domain);
    return r != nullptr ? (*r)["metrics"][name]["value"].get<uint64_t>() : UINT64_MAX;
  }
  uint64_t failures(const std::string& granularity) const { return metric(granularity, "failures"); }
};

// How a run judges each crash image: `--check COMMAND` (what a string converts to), or one of the other
// --check-* options; none where the command is "" (the run's OPTIONS then name one).
struct Judge {
  Judge(std::string command) : option(command.empty() ? "" : "--check"), value(std::move(command)) {}
  Judge(const char* command) : Judge(std::string(command)) {}
  Judge(std::string how, std::string what) : option(std::move(how)), value(std::move(what)) {}
  std::string option;
  std::string value;
};

// A Python check script, `SCRIPT ARGS`, judged by --check-python: the verdicts of `--check "python3 SCRIPT
// ARGS"` without an interpreter started per image, which would be most of the time of the tests that use it.
inline Judge python_check(std::string script_and_args) { return {"--check-python", std::move(script_and_args)}; }

// pmlab crash exec --setup SETUP --check CHECK --jobs 2 --out OUT OPTIONS... -- PROGRAM..., and what it left
// (no --jobs 2 where OPTIONS give --jobs).
inline ExecOutcome crash_exec(const std::string& setup, const Judge& check, const std::string& out,
                              const std::vector<std::string>& options, const std::vector<std::string>& program,
                              std::vector<std::string> env = {}) {
  platform::ProcessSpec spec;
  spec.argv = {PMLAB_CLI_PATH, "crash", "exec", "--out", out};
  if (std::find(options.begin(), options.end(), "--jobs") == options.end())
    spec.argv.insert(spec.argv.end(), {"--jobs", "2"});
  if (!check.option.empty()) spec.argv.insert(spec.argv.begin() + 3, {check.option, check.value});
  if (!setup.empty()) spec.argv.insert(spec.argv.begin() + 3, {"--setup", setup});  // "": none
  spec.argv.insert(spec.argv.end(), options.begin(), options.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), program.begin(), program.end());
  spec.set_env = std::move(env);
  spec.timeout_s = 120;
  ExecOutcome o;
  o.out = out;
  auto run = platform::run_process(spec);
  if (!run.ok()) return o;
  o.exit_code = run->exit_code;
  o.err = run->err;
  const auto file = std::filesystem::path(out) / "results.json";
  if (std::filesystem::exists(file)) o.results = nlohmann::json::parse(read_all(file.string()));
  return o;
}

}  // namespace pmlab::testing
