#include "pmlab/crash/loaded_subjects.hpp"

#include <dlfcn.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#define PMLAB_CRASH_HOST 1
#include <pmlab/crash.hpp>

#include "pmlab/crashtest/subject.hpp"
#include "pmlab/persist/public_persister.hpp"

namespace pmlab::crash {
namespace {

using persist::PublicPersister;

class PublicOps final : public v0::CrashOps {
 public:
  explicit PublicOps(OpTracker& ops) noexcept : ops_(ops) {}
  void begin(uint64_t op, const char* label) noexcept override { ops_.begin(op, label != nullptr ? label : "op"); }
  void end(uint64_t op) noexcept override { ops_.end(op); }
  void end_returning(uint64_t op, uint64_t result) noexcept override { ops_.end_returning(op, result); }
  void run_threads(unsigned threads, void (*body)(void*, unsigned), void* arg) override {
    ops_.run_threads(threads, [body, arg](unsigned thread) { body(arg, thread); });
  }

 private:
  OpTracker& ops_;
};

v0::CrashImage public_image(Image image) noexcept { return {image.base, image.size}; }

Status verdict(const std::string& why) { return why.empty() ? Status::success() : error(Errc::corrupted, why); }

class LoadedSubject final : public Subject {
 public:
  explicit LoadedSubject(std::unique_ptr<v0::CrashSubject> design) : design_(std::move(design)) {}

  size_t image_bytes() const override { return design_->image_bytes(); }
  void format(Image image, const persist::Persister& p) override {
    const PublicPersister persister(p);
    design_->format(public_image(image), persister);
  }
  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    const PublicPersister persister(p);
    PublicOps tracked(ops);
    design_->run(public_image(image), persister, tracked);
  }
  Status recover(Image image, const persist::Persister& p) override {
    const PublicPersister persister(p);
    return verdict(design_->recover(public_image(image), persister));
  }
  Status check(Image image, const persist::Persister& p, const CrashPoint& at) override {
    const PublicPersister persister(p);
    v0::CrashPoint point;
    point.ops_completed = at.ops_completed;
    point.op_in_flight = at.op_in_flight;
    point.fence_index = at.fence_index;
    point.at_exit = at.at_exit;
    point.history.reserve(at.history.size());
    for (const OpEvent& e : at.history) point.history.push_back({e.thread, e.op, e.result, e.returned});
    return verdict(design_->check(public_image(image), persister, point));
  }

 private:
  std::unique_ptr<v0::CrashSubject> design_;
};

bool valid_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

Result<std::vector<std::string>> load_subjects(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    return error(Errc::not_found, file + ": no such file (--load takes the path of a shared object)");
  // A path, never a bare name: dlopen would search the library path for one.
  const std::string path = std::filesystem::absolute(file, ec).string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return error(Errc::invalid_argument, file + ": cannot load it: " + (why != nullptr ? why : "unknown"));
  }
  using Entries = const pmlab_crash_subject_entry* (*)(size_t*);
  auto entries = reinterpret_cast<Entries>(dlsym(handle, "pmlab_crash_subjects_v0"));
  if (entries == nullptr)
    return error(Errc::invalid_argument, file +
                                             " defines no crash subjects (no pmlab_crash_subjects_v0: build it "
                                             "with pmlab/crash.hpp and register designs with PMLAB_CRASH_SUBJECT)");
  size_t count = 0;
  const pmlab_crash_subject_entry* list = entries(&count);
  if (count == 0) return error(Errc::invalid_argument, file + " registers no crash subjects");
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const pmlab_crash_subject_entry entry = list[i];
    const std::string name = entry.name != nullptr ? entry.name : "";
    if (!valid_name(name) || entry.make == nullptr)
      return error(Errc::invalid_argument, file + ": subject '" + name +
                                               "' is not a valid name (letters, digits, "
                                               "'.', '-', '_') or has no factory");
    if (SubjectRegistry::instance().find(name) != nullptr)
      return error(Errc::already_exists, file + ": a crash subject named '" + name + "' exists already");
    SubjectInfo info;
    info.name = name;
    info.description =
        std::string(entry.description != nullptr ? entry.description : "") + " (loaded from " + file + ")";
    info.deliberately_broken = entry.deliberately_broken != 0;
    info.make = [make = entry.make, name](const SubjectOptions& o) -> std::unique_ptr<Subject> {
      const v0::CrashOptions options{o.ops, o.seed};
      std::unique_ptr<v0::CrashSubject> design(make(&options));
      if (!design) throw std::runtime_error("loaded subject " + name + ": its factory returned no subject");
      return std::make_unique<LoadedSubject>(std::move(design));
    };
    SubjectRegistry::instance().add(std::move(info));
    names.push_back(name);
  }
  return names;
}

}  // namespace pmlab::crash
