// --check-python: a Python check script judges each crash image as `python3 SCRIPT ARGS` would (its
// environment, argv with {} the image's path, exit 0 for consistent), in a fork of one interpreter that read,
// compiled and imported what the script needs once: the per-image cost of a --check-server, and each image
// still judged by a process that judged nothing before it.
#pragma once

#include <string_view>

namespace pmlab::crash::exec {

// The server's Python source: `python3 FILE "SCRIPT ARGS"` answers --check-server's requests (judges.hpp),
// "ok" where the script exits 0, else its last line of output (the lines before it, and how it ended, on
// stderr). It exits 127 where the script cannot be read or compiled.
std::string_view python_check_server_source();

}  // namespace pmlab::crash::exec
