// The command-line layer on arbitrary arguments: CLI11, pmlab's strict option checks and its error
// messages must answer every argument vector with an exit code, never a crash, an uncaught exception
// or a hang. Commands are parsed, not run (their callbacks are set aside): running one is what the other
// targets and the CLI tests cover.
//
// Input: the arguments after "pmlab", separated by NUL bytes (at most 24).
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "pmlab/cli/commands.hpp"

namespace {

// A command's callback owns its options' storage (shared_ptrs it captured): dropping the callback would
// free what CLI11 writes the parsed values into. So the callbacks are moved out, kept alive until the
// parse is over, and not run. CLI11 has no accessor for them; a derived class may name the protected
// members, and the member pointers apply to any App.
struct CallbackAccess : CLI::App {
  static constexpr auto final_callback = &CallbackAccess::final_callback_;
  static constexpr auto parse_complete_callback = &CallbackAccess::parse_complete_callback_;
};

void take_callbacks(CLI::App* app, std::vector<std::function<void()>>& kept) {
  kept.push_back(std::exchange(app->*CallbackAccess::final_callback, {}));
  kept.push_back(std::exchange(app->*CallbackAccess::parse_complete_callback, {}));
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) take_callbacks(sub, kept);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"pmlab"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 25; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (!current.empty() && args.size() < 25) args.push_back(current);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());

  int exit_code = 0;
  auto app = pmlab::cli::make_app(exit_code);
  std::vector<std::function<void()>> kept;
  take_callbacks(app.get(), kept);
  const int code = pmlab::cli::parse_command_line(*app, static_cast<int>(argv.size()), argv.data(), exit_code);
  if (code != 0 && code != 2) std::abort();  // parsing alone answers success or bad usage
  return 0;
}
