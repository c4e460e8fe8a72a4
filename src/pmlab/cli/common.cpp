#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "pmlab/cli/commands.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/platform/process.hpp"

#ifndef PMLAB_SOURCE_DIR
#define PMLAB_SOURCE_DIR ""
#endif

namespace pmlab::cli {
namespace {
std::string g_command_line;
}

void set_command_line(int argc, char** argv) {
  g_command_line.clear();
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    g_command_line += i == 0 ? std::string("pmlab") : std::string(argv[i]);
  }
}

const std::string& command_line() { return g_command_line; }

void print_marked_lines(const std::string& text, const char* indent) {
  for (size_t from = 0; from < text.size();) {
    const size_t end = std::min(text.find('\n', from), text.size());
    std::fprintf(stderr, "%s| %s\n", indent, printable(std::string_view(text).substr(from, end - from)).c_str());
    from = end + 1;
  }
}

int report_error(const Status& status) {
  // A message may end with lines of a program's output, marked as such below its first line.
  const std::string& message = status.message();
  const size_t first_end = std::min(message.find('\n'), message.size());
  std::fprintf(stderr, "pmlab: error: %s\n", printable(message.substr(0, first_end)).c_str());
  if (first_end < message.size()) print_marked_lines(message.substr(first_end + 1), "  ");
  return status.exit_code();
}

namespace {

// Where the report renderer's package is: PMLAB_PYTHONPATH, else where an installation put it beside the
// executable (share/pmlab/python), else python/ in the source tree pmlab was built from; empty when none
// holds it (then it must be importable as it is: `pip install python/`).
std::string report_renderer_path() {
  if (const char* p = std::getenv("PMLAB_PYTHONPATH")) return p;
  std::error_code ec;
  const std::filesystem::path installed = executable_path().parent_path().parent_path() / "share" / "pmlab" / "python";
  for (const std::filesystem::path& dir : {installed, std::filesystem::path(PMLAB_SOURCE_DIR) / "python"})
    if (std::filesystem::is_directory(dir / "pmlab_report", ec)) return dir.string();
  return {};
}

}  // namespace

int run_python_tool(const std::string& module, const std::vector<std::string>& tool_args) {
  const std::string pythonpath = report_renderer_path();
  std::error_code ec;
  if (std::getenv("PMLAB_PYTHONPATH") != nullptr && !std::filesystem::is_directory(pythonpath + "/pmlab_report", ec))
    return report_error(error(Errc::not_found, "the report renderer is not at PMLAB_PYTHONPATH=" + pythonpath +
                                                   " (it names the directory that holds pmlab_report)"));
  const std::string python = platform::python_interpreter();
  std::vector<std::string> args = {python, "-m", module};
  args.insert(args.end(), tool_args.begin(), tool_args.end());
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return report_error(error(Errc::io_error, "cannot start the report renderer"));
  if (pid == 0) {
    if (!pythonpath.empty()) {
      const char* old = std::getenv("PYTHONPATH");
      std::string value = pythonpath + (old && *old ? std::string(":") + old : std::string());
      setenv("PYTHONPATH", value.c_str(), 1);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "pmlab: error: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    _exit(4);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 1;
}

int render_report(const std::string& run_dir, const std::string& out_file) {
  std::vector<std::string> args = {run_dir};
  if (!out_file.empty()) args.insert(args.end(), {"--out", out_file});
  return run_python_tool("pmlab_report", args);
}

}  // namespace pmlab::cli
