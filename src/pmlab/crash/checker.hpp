// Where crash states are recovered and checked: in processes that never ran the design, as after a reboot.
//
// Before the design first runs, the simulator forks a template process. The template reserves the run's
// image range as inaccessible and forks the checkers; each checker takes crash images from shared memory
// and, for each, constructs a fresh Subject (nothing of the run's object, its DRAM state, or the run's
// image is reachable) and calls its recover() and then check() on the image, mapped at an address of its
// own. A recovery that follows an absolute pointer into the run's image faults, and the fault is reported as
// such. A checker that crashes, hangs past the timeout or dies on a sanitizer report costs the state it
// was checking, which is a failure; the template forks a fresh checker and the rest continue.
//
// A state picked for crash-testing its recovery is recovered with its writes tracked: at every fence of
// the recovery and at its end (when recover() returns), up to the recovery budget of crash states of what
// it wrote are recovered again from scratch, in the same checker
// (fresh subject, another mapping, the first image inaccessible meanwhile), against the same contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/call_sites.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::crash {

struct CheckerOptions {
  unsigned jobs = 1;       // checker processes
  double timeout_s = 5.0;  // per recovery
  persist::Domain domain = persist::Domain::adr;
  persist::Config config;                       // the recoveries' persister
  Granularity granularity = Granularity::line;  // of crash states taken inside recovery
  uint64_t recovery_budget = 0;                 // crash states per crash point of a recovery
  SubjectOptions subject;
  std::optional<Mutant> mutant;  // applied to recoveries too
  bool record_sites = false;     // collect the call sites recoveries reach
};

struct CheckRequest {
  CrashPoint at;                // op_label is not passed on
  bool crash_recovery = false;  // crash-test this state's recovery
  uint64_t recovery_seed = 0;
};

struct CheckVerdict {
  bool ok = true;
  std::string message;
  uint64_t recovery_states = 0;  // crash states taken inside the recovery and recovered again
};

class CheckerPool {
 public:
  using OnVerdict = std::function<void(uint64_t tag, CheckVerdict&& verdict)>;

  // Forks the template. Call after `run_image` is mapped and before the design runs in this process.
  static Result<std::unique_ptr<CheckerPool>> start(const SubjectInfo& info, const CheckerOptions& options,
                                                    Image run_image);
  ~CheckerPool();
  CheckerPool(const CheckerPool&) = delete;
  CheckerPool& operator=(const CheckerPool&) = delete;

  // A free slot to build a crash image into; while none is free, waits for verdicts and passes them on.
  Result<size_t> acquire(const OnVerdict& on_verdict);
  std::byte* image(size_t slot) const noexcept;
  void submit(size_t slot, uint64_t tag, const CheckRequest& request);
  // Waits for every submitted state, then stops the checkers.
  Status finish(const OnVerdict& on_verdict);
  // Call sites the checkers' recoveries reached (with record_sites), by the function they are in.
  std::map<SiteKey, std::string> sites() const;
  // What the calls the mutant changed in the checkers' recoveries did.
  MutationEffects mutation_effects() const;

  struct Shared;

 private:
  CheckerPool() = default;
  Status pump(const OnVerdict& on_verdict);

  const SubjectInfo* info_ = nullptr;
  CheckerOptions options_;
  Image run_image_{};
  Shared* shared_ = nullptr;
  size_t shared_bytes_ = 0;
  size_t slots_ = 0;
  std::vector<size_t> free_;
  size_t outstanding_ = 0;
  int job_fd_ = -1;     // slot tokens to the checkers
  int result_fd_ = -1;  // verdicts from the checkers, deaths from the template
  int spawn_fd_ = -1;   // requests for fresh checkers to the template
  int template_pid_ = -1;
};

}  // namespace pmlab::crash
