// pmlab: a laboratory for persistent memory.
//
// Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool,
// I/O, no space, in use); 4 not supported on this platform.
#include <cstdio>

#include "pmlab/cli/commands.hpp"

int main(int argc, char** argv) {
  pmlab::cli::set_command_line(argc, argv);
  CLI::App app{"pmlab: measure how a memory platform really behaves, and the persistent building blocks on it"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool, I/O,\n"
      "no space, in use); 4 not supported on this platform.");
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
    std::fprintf(stderr, "pmlab: error: %s\n", e.what());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  }
  return exit_code;
}
