// pmlab: a laboratory for persistent memory.
//
// Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool,
// I/O, no space, in use); 4 not supported on this platform; 128+N stopped by signal N.
#include <cstdio>
#include <string>

#include "pmlab/cli/commands.hpp"
#include "pmlab/common/text.hpp"

namespace {

// CLI11 says "A subcommand is required" for `pmlab pool bogus`: name the word it did not know instead.
std::string unknown_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "pmlab";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    const auto subcommands = current->get_subcommands([](CLI::App*) { return true; });
    if (subcommands.empty()) return {};
    CLI::App* next = nullptr;
    std::string names;
    for (CLI::App* s : subcommands) {
      if (s->check_name(word)) next = s;
      names += (names.empty() ? "" : ", ") + s->get_name();
    }
    if (next == nullptr) return "unknown command '" + word + "' for '" + path + "' (one of: " + names + ")";
    current = next;
    path += " " + word;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  pmlab::cli::set_command_line(argc, argv);
  CLI::App app{"pmlab: measure how a memory platform really behaves, and the persistent building blocks on it"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool, I/O,\n"
      "no space, in use); 4 not supported on this platform; 130/143 stopped by SIGINT/SIGTERM (128+signal).");
  int exit_code = 0;
  pmlab::cli::add_info(app, exit_code);
  pmlab::cli::add_list(app, exit_code);
  pmlab::cli::add_run(app, exit_code);
  pmlab::cli::add_report(app, exit_code);
  pmlab::cli::add_pool(app, exit_code);
  pmlab::cli::add_crash(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = unknown_subcommand(app, argc, argv);
    if (message.empty()) message = e.what();
    std::fprintf(stderr, "pmlab: error: %s\n", pmlab::printable(message).c_str());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  }
  return exit_code;
}
