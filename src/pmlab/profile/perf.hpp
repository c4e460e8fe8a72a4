// Recording a run with `perf record`. pmlab samples with the software `cpu-clock` event: it needs no
// hardware PMU, so it works in VMs where `perf stat` reports cycles and instructions as not supported.
//
// Why system-wide (-a) filtered by pid: worker threads are created per run, after any attach, and
// `perf record -p PID` does not follow threads created after it attached (observed: zero samples).
// So each run starts a perf child disabled (-D -1) with a control FIFO, enables it right before the run's
// body and disables it right after; `perf script --pid` keeps this process's samples. System-wide
// sampling needs root or CAP_PERFMON, or kernel.perf_event_paranoid <= 0.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/profile/stacks.hpp"

namespace pmlab::profile {

struct PerfSupport {
  bool available = false;
  std::string perf_path;  // the perf binary
  std::string event = "cpu-clock";
  std::string reason;  // why not, when not
};

// Helper programs (perf, objdump, ipmctl): the path of `name` in PATH, empty when absent; and a run of
// argv (argv[0] a path) with stdout captured into `out` and stderr into `err_file` (or discarded when
// empty), returning the exit status.
std::string find_in_path(const std::string& name);
Result<int> run_capture(const std::vector<std::string>& argv, std::string& out, const std::string& err_file);

// Finds perf (PMLAB_PERF overrides the search in PATH) and checks the permission to sample system-wide.
PerfSupport detect_perf();

// One recording: started disabled, enabled and disabled around the code to profile.
class Recording {
 public:
  Recording() = default;
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  ~Recording();

  // Starts perf in `work_dir` (created if missing) and enables sampling; returns once perf acknowledged.
  static Result<std::unique_ptr<Recording>> start(const PerfSupport& perf, const std::string& work_dir,
                                                  int frequency_hz);
  // Disables sampling and waits for perf to write its data file.
  Status stop();
  // This process's samples (perf script --pid), parsed.
  Result<std::vector<Sample>> samples() const;

 private:
  Status fail(const std::string& what);
  std::string perf_path_, dir_, data_, log_;
  pid_t child_ = -1;
  int ctl_fd_ = -1, ack_fd_ = -1;
};

// The persistence instructions of this executable (objdump of /proc/self/exe); empty when objdump is
// missing, in which case inlined flushes and fences count toward their caller.
PersistSites persist_sites_of_self();

}  // namespace pmlab::profile
