// pmlab: a laboratory for persistent memory.
//
// Exit codes: 0 success; 1 a run or check failed; 2 bad usage or parameter; 3 bad input (file, pool,
// I/O, no space, in use); 4 not supported on this platform; 128+N stopped by signal N.
#include "pmlab/cli/commands.hpp"

int main(int argc, char** argv) {
  pmlab::cli::set_command_line(argc, argv);
  int exit_code = 0;
  auto app = pmlab::cli::make_app(exit_code);
  return pmlab::cli::parse_command_line(*app, argc, argv, exit_code);
}
