#include "pmlab/crash/exec/check_setup.hpp"

#include <filesystem>

#include "pmlab/common/files.hpp"
#include "pmlab/crash/exec/python_checks.hpp"
#include "pmlab/crash/exec/starting_files.hpp"
#include "pmlab/crash/simulator.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

// A command the shell cannot parse (an unterminated quote) would fail at every state, each failure the
// shell's complaint: it is refused before the program runs. `sh -n` reads the command and runs nothing.
Status shell_reads(const std::string& option, const std::string& command) {
  platform::ProcessSpec parse;
  parse.argv = {"/bin/sh", "-n", "-c", command};
  parse.timeout_s = 10;
  auto parsed = platform::run_process(parse);
  if (!parsed) return parsed.status();
  if (parsed->ok()) return {};
  return error(Errc::invalid_argument,
               option + " is not a command /bin/sh can read: " + platform::tail_lines(parsed->err, 1));
}

}  // namespace

Status check_options(const ExecOptions& o) {
  if (o.program.empty()) return error(Errc::invalid_argument, "name the program to run after --");
  if (o.check.empty() && !o.trace_only)
    return error(Errc::invalid_argument, "--check names the command that judges a crash image");
  using CheckBy = ExecOptions::CheckBy;
  if (o.check_by == CheckBy::server && o.check.find("{}") != std::string::npos)
    return error(Errc::invalid_argument,
                 "--check-server takes no {}: each image's path comes in its request (PMLAB_CRASH_IMAGE)");
  if (!platform::find_program(o.program[0])) return error(Errc::not_found, platform::why_no_program(o.program[0]));
  if (o.replay && o.replay_image.empty())
    return error(Errc::invalid_argument, "--replay needs --image FILE to write the image to");
  if (o.schedules == 0) return error(Errc::invalid_argument, "--schedules counts traced runs: at least 1");
  if (o.replay && o.schedules > 1)
    return error(Errc::invalid_argument,
                 "--replay rebuilds a state of one traced run: give that run's --trace, without --schedules");
  if (auto runtime = find_runtime(); !runtime) return runtime.status();
  if (o.check_by == CheckBy::python) {
    if (!platform::find_program(platform::python_interpreter()))
      return error(Errc::not_found, "--check-python: " + platform::why_no_program(platform::python_interpreter()));
    return {};  // the script is read by the server, which says so where it cannot
  }
  if (!o.check.empty()) {
    const auto argv = checker_argv(o.check, "image");
    const std::string option = check_option(o.check_by);
    if (argv.empty()) return error(Errc::invalid_argument, option + " names no command");
    if (check_needs_shell(o.check)) PMLAB_TRY(shell_reads(option, o.check));
    else if (!platform::find_program(argv[0]))
      return error(Errc::not_found, option + ": " + platform::why_no_program(argv[0]));
  }
  if (o.check_by == CheckBy::server) return {};  // the image comes in the request, whatever files it names
  std::vector<ImageFile> named;                  // refused before a run where the check names a --pool file itself
  for (const std::string& p : o.pools) named.push_back({p});
  return check_reads_crash_images(o.check, named);
}

std::vector<std::vector<std::string>> paths_at_end(const TraceFile& trace, const std::vector<ImageFile>& files) {
  const auto at_end = names_at_end(trace);
  std::vector<std::vector<std::string>> paths(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    if (const auto named = at_end.find({files[i].device, files[i].inode}); !files[i].directory && named != at_end.end())
      paths[i] = named->second;
  return paths;
}

Result<std::unique_ptr<Judges>> start_judges(const ExecOptions& o, const TraceFile& trace, const Replay& layout,
                                             const std::vector<std::vector<std::string>>& at_end,
                                             const std::string& scratch) {
  JudgeOptions jo;
  jo.check = o.check;
  if (o.check_by == ExecOptions::CheckBy::server) jo.server = checker_argv(o.check, "");
  if (o.check_by == ExecOptions::CheckBy::python) {
    const std::string source = (std::filesystem::path(scratch) / "check_python.py").string();
    PMLAB_TRY(write_file_atomically(source, python_check_server_source()));
    jo.server = {platform::python_interpreter(), source, o.check};
  }
  jo.timeout_s = o.timeout_s;
  jo.recheck = o.recheck;
  jo.jobs = o.replay ? 1 : (o.jobs ? o.jobs : default_jobs());
  jo.work_dir = scratch;
  jo.files = layout.files();
  for (size_t i = 0; i < jo.files.size(); ++i) {
    jo.names.push_back(trace.image_name(jo.files[i].path));
    jo.names_at_end.push_back(jo.files[i].directory ? jo.names.back()
                              : at_end[i].empty()   ? ""
                                                    : trace.image_name(at_end[i].front()));
  }
  jo.image_file = named_image(jo.files, o.pools, at_end);
  // `{}` is the first --pool's path, whichever file a crash leaves there (a rename may have put another); with
  // no --pool, the path the first file the run mapped has when the run ends (made under another name and
  // renamed, it is not there before the rename).
  if (!o.pools.empty()) jo.image_name = std::filesystem::path(o.pools.front()).filename().string();
  else if (!jo.files.empty() && !jo.files[jo.image_file].directory) jo.image_name = jo.names_at_end[jo.image_file];
  std::error_code ec;
  jo.image_is_directory = !o.pools.empty() && std::filesystem::is_directory(o.pools.front(), ec);
  jo.image_bytes = layout.image_bytes();
  return Judges::start(jo);
}

Result<bool> passes_random_bytes(Judges& judges, const ExecOptions& o, const std::vector<size_t>& pages) {
  auto probe = judges.judge_random_image(o.seed, pages);
  if (!probe) return probe.status();
  if (probe->not_run) {
    const std::string said = platform::tail_lines(probe->output, 1);
    return error(Errc::invalid_argument, std::string(check_option(o.check_by)) + " cannot run: " + probe->outcome +
                                             (said.empty() ? "" : " (" + said + ")"));
  }
  return probe->consistent;
}

}  // namespace pmlab::crash::exec
