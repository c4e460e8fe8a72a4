#include "pmlab/common/process_state.hpp"

namespace pmlab {
namespace {

std::vector<std::pair<std::string, std::string (*)()>>& probes() {
  static std::vector<std::pair<std::string, std::string (*)()>> all;
  return all;
}

}  // namespace

void register_state_probe(std::string name, std::string (*describe)()) {
  probes().emplace_back(std::move(name), describe);
}

StateSnapshot snapshot_process_state() {
  StateSnapshot out;
  for (const auto& [name, describe] : probes()) out.emplace_back(name, describe());
  return out;
}

std::vector<std::string> state_changes(const StateSnapshot& before, const StateSnapshot& after) {
  std::vector<std::string> out;
  for (const auto& [name, now] : after) {
    std::string then = "(not registered)";
    for (const auto& [n, v] : before)
      if (n == name) then = v;
    if (then != now) out.push_back(name + ": " + then + " -> " + now);
  }
  return out;
}

}  // namespace pmlab
