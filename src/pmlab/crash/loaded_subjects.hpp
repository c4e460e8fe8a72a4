// Crash subjects from a user's shared object (`pmlab crash --load FILE`): designs written against the
// public crash API (include/pmlab/crash.hpp) and compiled out of pmlab's tree, registered beside pmlab's
// own so that every campaign option applies to them.
#pragma once

#include <string>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::crash {

// Loads FILE (it stays loaded for the process's life) and registers each subject it defines; returns
// their names. Errors: no such file, not a loadable object, no subjects (built without pmlab/crash.hpp),
// a name that is malformed or already taken.
Result<std::vector<std::string>> load_subjects(const std::string& file);

}  // namespace pmlab::crash
