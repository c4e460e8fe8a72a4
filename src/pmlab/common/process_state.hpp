// Process-wide state a run may switch for itself and must switch back (PMDK's persistence switches, the
// environment libpmem reads, the main thread's CPU affinity): each owner registers a probe that describes
// its state in text. The runner takes a snapshot before the first run and compares after every run, so a
// run that leaves the process changed fails by name instead of silently shaping every run after it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pmlab {

using StateSnapshot = std::vector<std::pair<std::string, std::string>>;

// `describe` returns the state's current value in text; called from the main thread between runs.
void register_state_probe(std::string name, std::string (*describe)());
struct StateProbeRegistration {
  StateProbeRegistration(std::string name, std::string (*describe)()) {
    register_state_probe(std::move(name), describe);
  }
};

StateSnapshot snapshot_process_state();
// What differs between two snapshots, one line per probe ("name: before -> after"); empty when equal.
std::vector<std::string> state_changes(const StateSnapshot& before, const StateSnapshot& after);

}  // namespace pmlab
