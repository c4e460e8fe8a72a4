#include "pmlab/crashtest/subject.hpp"

#include <thread>

namespace pmlab::crash {

// Outside the simulator the threads simply run.
void OpTracker::run_threads(unsigned threads, const std::function<void(unsigned)>& body) {
  std::vector<std::thread> running;
  for (unsigned t = 0; t < threads; ++t) running.emplace_back(body, t);
  for (std::thread& t : running) t.join();
}

SubjectRegistry& SubjectRegistry::instance() {
  static SubjectRegistry registry;
  return registry;
}

void SubjectRegistry::add(SubjectInfo info) { subjects_.push_back(std::move(info)); }

const SubjectInfo* SubjectRegistry::find(std::string_view name) const {
  for (const auto& s : subjects_)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace pmlab::crash
