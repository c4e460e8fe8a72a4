// How a campaign's check is set up: what is refused before any run, the judges of a traced run's states, and
// the image of random bytes judged before the first of them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/campaign.hpp"
#include "pmlab/crash/exec/judges.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

// The options' errors that need no traced run: a program or check that cannot run, a check that names a
// --pool file and not its image.
Status check_options(const ExecOptions& o);

// Per file of `files`, the paths it has when the run ends (none for a directory, or a file the run unlinked):
// where a program looks for a file it made under another name and renamed.
std::vector<std::vector<std::string>> paths_at_end(const TraceFile& trace, const std::vector<ImageFile>& files);

// The judges of one domain's states (one checker where a single state is replayed); `at_end`: the files'
// paths_at_end.
Result<std::unique_ptr<Judges>> start_judges(const ExecOptions& o, const TraceFile& trace, const Replay& layout,
                                             const std::vector<std::vector<std::string>>& at_end,
                                             const std::string& scratch);

// Before the first state, the check judges random bytes in the pages the run gave content: whether it
// passed them; a check that cannot run (a shell's 126 or 127) stops the run here.
Result<bool> passes_random_bytes(Judges& judges, const ExecOptions& o, const std::vector<size_t>& pages);

}  // namespace pmlab::crash::exec
