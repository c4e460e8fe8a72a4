#include "pmlab/crash/subject.hpp"

namespace pmlab::crash {

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
