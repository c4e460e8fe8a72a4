// Scratch pools: the pool files a pmlab process makes for itself and removes when it is done (the run's
// default pool, a peer's libpmemobj / libpmemlog / libpmemblk pool, the copies of a side-by-side case).
// They share one name pattern, pmlab-<pid>.pool or pmlab-<pid>-<what>.pool, so that the files of a
// process killed before it could remove them (SIGKILL, a power cut of the test machine) are recognised
// by the next run and swept, instead of filling /dev/shm run after run.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pmlab::pool {

// The path of this process's scratch pool `what` in `dir`: pmlab-<pid>.pool for an empty `what`, else
// pmlab-<pid>-<what>.pool. `what` is a short name of letters, digits, '-', '_', '.' and '+'.
std::string scratch_pool_path(const std::filesystem::path& dir, std::string_view what = {});

// The process that made the scratch pool called `file_name` (a name, not a path); nullopt for a name of
// another pattern.
std::optional<pid_t> scratch_pool_owner(std::string_view file_name);

// Removes the scratch pools in `dir` whose process has ended and which nobody has open: pmlab pools, the
// pools PMDK's libraries made under a scratch name, and pools whose creation was cut off before their
// header was written (a first page of zeros). Anything else under a matching name is left alone, as is the pool of a
// live process (a pmlab run still using it). `note` gets one line per pool removed and per pool it could not remove,
// saying why and how to remove it by hand.
void sweep_scratch_pools(const std::filesystem::path& dir, const std::function<void(const std::string&)>& note);

}  // namespace pmlab::pool
