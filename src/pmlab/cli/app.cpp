// The pmlab command line as one object, so the binary and the argument fuzzer parse the same way.
#include <cstdio>
#include <string>

#include "pmlab/bench/context.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/platform/system.hpp"

namespace pmlab::cli {
namespace {

// CLI11 says "A subcommand is required" for `pmlab pool bogus`: name the word it did not know instead.
// Only where a subcommand is required: elsewhere (`pmlab crash DESIGN --budget abc`) a word that is no
// subcommand is a positional argument, and the option's own message is the one to show.
std::string unknown_subcommand(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* current = &app;
  std::string path = "pmlab";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") return {};
    if (word.empty() || word[0] == '-') continue;
    const auto subcommands = current->get_subcommands([](CLI::App*) { return true; });
    if (subcommands.empty() || current->get_require_subcommand_min() == 0) return {};
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

std::unique_ptr<CLI::App> make_app(int& exit_code) {
  auto app = std::make_unique<CLI::App>(
      "pmlab: measure how a memory platform really behaves, and the persistent building blocks on it");
  app->require_subcommand(1);
  app->set_version_flag("--version",
                        std::string("pmlab ") + bench::kPmlabVersion + " (git " + platform::git_revision() + ")");
  app->footer(
      "Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool, I/O,\n"
      "no space, in use); 4 not supported on this platform; 128+N stopped by signal N (130 SIGINT, 143 SIGTERM).");
  add_info(*app, exit_code);
  add_list(*app, exit_code);
  add_run(*app, exit_code);
  add_report(*app, exit_code);
  add_compare(*app, exit_code);
  add_export(*app, exit_code);
  add_pool(*app, exit_code);
  add_crash(*app, exit_code);
  return app;
}

int parse_command_line(CLI::App& app, int argc, const char* const* argv, int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    std::string message = unknown_subcommand(app, argc, argv);
    if (message.empty()) message = e.what();
    std::fprintf(stderr, "pmlab: error: %s\n", printable(message).c_str());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  } catch (const std::exception& e) {
    // Expected failures are Status values; an exception here is a bug. Catching it unwinds the stack,
    // so destructors still run (a temporary pool is removed) instead of std::terminate aborting.
    std::fprintf(stderr, "pmlab: error: internal error: %s\n", printable(e.what()).c_str());
    return 1;
  }
  return exit_code;
}

}  // namespace pmlab::cli
