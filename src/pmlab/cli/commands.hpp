// The subcommands of `pmlab`, one file each. Each adds itself to the app and stores its exit code in
// `exit_code` when it runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pmlab/common/status.hpp"

namespace pmlab::cli {

// The whole command line: every subcommand added; running one stores its exit code in `exit_code`.
std::unique_ptr<CLI::App> make_app(int& exit_code);
// Parses ARGV and runs the chosen subcommand; returns the exit code (2 for bad usage, with one
// "pmlab: error: ..." line on stderr).
int parse_command_line(CLI::App& app, int argc, const char* const* argv, int& exit_code);

void add_info(CLI::App& app, int& exit_code);
void add_list(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_report(CLI::App& app, int& exit_code);
void add_compare(CLI::App& app, int& exit_code);
void add_export(CLI::App& app, int& exit_code);
void add_pool(CLI::App& app, int& exit_code);
void add_crash(CLI::App& app, int& exit_code);
// `pmlab crash exec`, under the crash command.
void add_crash_exec(CLI::App& crash, int& exit_code);

// Prints "pmlab: error: <message>" on stderr and returns the status's exit code.
int report_error(const Status& status);
// Each line of `text` (a program's output) on stderr after `indent` and "| ", made printable: no line of it
// can pass for pmlab's own, nor move the terminal.
void print_marked_lines(const std::string& text, const char* indent);
// Runs `python3 -m MODULE ARGS…` of the Python side (python/pmlab_report); returns its exit code.
int run_python_tool(const std::string& module, const std::vector<std::string>& args);
// Runs the Python report renderer on a run directory; returns its exit code.
int render_report(const std::string& run_dir, const std::string& out_file);
// The command line as typed, for results.json.
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace pmlab::cli
