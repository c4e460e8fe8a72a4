#include "pmlab/crash/simulator.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "pmlab/crash/enumerator.hpp"
#include "pmlab/platform/clock.hpp"

#ifndef PMLAB_SOURCE_DIR
#define PMLAB_SOURCE_DIR ""
#endif

namespace pmlab::crash {
namespace {

// Set while a recovery runs under recover_with_crashes: cleared by recovery_done().
thread_local bool* tls_recovery_running = nullptr;

// Anonymous memory for an image; each mapping lands at its own address.
class Mapping {
 public:
  explicit Mapping(size_t size) : size_((size + 4095) & ~size_t{4095}) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  ~Mapping() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::byte* base() const { return base_; }

 private:
  size_t size_;
  std::byte* base_;
};

class Tracker final : public OpTracker {
 public:
  void begin(uint64_t op, std::string_view label) noexcept override {
    in_flight_ = true;
    current_ = op;
    label_.assign(label.data(), label.size());
  }
  void end(uint64_t op) noexcept override {
    in_flight_ = false;
    completed_ = op + 1;
  }
  CrashPoint point(uint64_t fence, bool at_exit) const {
    CrashPoint p;
    p.ops_completed = completed_;
    p.op_in_flight = in_flight_;
    p.fence_index = fence;
    p.at_exit = at_exit;
    p.op_label = label_;
    return p;
  }
  uint64_t completed() const { return completed_; }

 private:
  uint64_t completed_ = 0;
  uint64_t current_ = 0;
  bool in_flight_ = false;
  std::string label_;
};

// Counts the crash points of a run without checking anything.
struct FenceCounter final : persist::Observer {
  uint64_t fences = 0;
  void on_writeback(const void*, size_t, persist::Writeback) noexcept override {}
  void on_fence() noexcept override { ++fences; }
};

// "src/pmlab/log/zero.cpp:88 (ZeroLog::append)": the design's call site, trimmed for reading.
std::string site_of(const std::source_location& where) {
  std::string file = where.file_name();
  const std::string root = std::string(PMLAB_SOURCE_DIR) + "/";
  if (!root.empty() && file.rfind(root, 0) == 0) file = file.substr(root.size());
  std::string function = where.function_name();
  function = function.substr(0, function.find('('));
  if (size_t space = function.rfind(' '); space != std::string::npos) function = function.substr(space + 1);
  // Keep Class::method: drop namespaces.
  if (size_t last = function.rfind("::"); last != std::string::npos && last > 0) {
    size_t before = function.rfind("::", last - 1);
    if (before != std::string::npos) function = function.substr(before + 2);
  }
  return file + ":" + std::to_string(where.line()) + " (" + function + ")";
}

struct ChildResult {
  uint64_t index;
  uint32_t ok;
  uint32_t length;
  uint64_t recovery_states;  // crash states taken inside this state's recovery and checked
};

bool write_all(int fd, const void* data, size_t len) {
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

class Simulation {
 public:
  Simulation(const SubjectInfo& info, const SimOptions& options, uint64_t per_point)
      : info_(info), options_(options), per_point_(per_point) {}

  Status run(SimReport& report) {
    subject_ = info_.make(options_.subject);
    const size_t size = subject_->image_bytes();
    Mapping working(size);
    if (working.base() == nullptr) return error(Errc::no_space, "cannot map a " + std::to_string(size) + "-byte image");
    image_ = {working.base(), size};
    auto persister = persist::Persister::create(
        {.domain = options_.domain, .flush = persist::best_line_flush(platform::CpuFeatures::host()),
         .elide_flush = false, .elide_fence = false});
    if (!persister) return persister.status();
    persister_ = &*persister;
    subject_->format(image_, *persister);

    DurabilityTracker tracker(image_, options_.domain,
                              [this](const std::source_location& where) { crash_point(where, false); });
    tracker_ = &tracker;
    report_ = &report;
    persister->attach(&tracker);
    subject_->run(image_, *persister, ops_);
    persister->detach();
    crash_point(std::source_location::current(), true);
    report.operations = ops_.completed();
    return Status::success();
  }

 private:
  void crash_point(const std::source_location& where, bool at_exit) {
    const uint64_t index = ++report_->crash_points;
    if (options_.replay && options_.replay->first != index) return;
    if (report_->states_checked >= options_.budget && !options_.replay) return;
    const CrashPoint at = ops_.point(at_exit ? tracker_->fences() + 1 : tracker_->fences(), at_exit);
    const std::vector<PendingUnit> units = tracker_->pending(options_.granularity);
    EnumerationLimits limits{.budget = std::min(per_point_, options_.budget - std::min(options_.budget, report_->states_checked)),
                             .exhaustive_limit = options_.exhaustive_limit,
                             .max_deviation = options_.max_deviation,
                             .seed = options_.seed ^ (index * 0x9e3779b97f4a7c15ULL)};
    if (options_.replay) limits.budget = options_.replay->second + 1;
    std::vector<CrashState> states = enumerate_states(units, limits);
    report_->states_enumerated += states.size();
    const uint64_t durable_hash = image_hash(tracker_->durable());

    std::vector<size_t> to_check;
    for (size_t i = 0; i < states.size(); ++i) {
      if (options_.replay && i != options_.replay->second) continue;
      auto key = std::make_tuple(state_hash(durable_hash, tracker_->durable(), units, states[i]), at.ops_completed, at.op_in_flight);
      if (!seen_.insert(key).second) {
        ++report_->duplicate_states;
        continue;
      }
      to_check.push_back(i);
    }
    if (!to_check.empty()) ++report_->crash_points_checked;
    check(index, at, at_exit ? std::string("exit") : site_of(where), units, states, to_check);
  }

  // Runs recovery + checks for the states in forked children; a child that dies or hangs costs one
  // state, and the rest continue in a fresh child.
  void check(uint64_t point, const CrashPoint& at, const std::string& site, const std::vector<PendingUnit>& units,
             const std::vector<CrashState>& states, const std::vector<size_t>& to_check) {
    size_t next = 0;
    while (next < to_check.size()) {
      int fds[2];
      if (pipe(fds) != 0) {
        fail(point, at, site, units, states, to_check[next], "cannot create a pipe for the checker");
        ++next;
        continue;
      }
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        child(fds[1], at, units, states, to_check, next);
      }
      close(fds[1]);
      size_t reported = next;
      ChildResult r{};
      while (read_all(fds[0], &r, sizeof r)) {
        std::string message(r.length, '\0');
        if (r.length > 0 && !read_all(fds[0], message.data(), r.length)) break;
        ++report_->states_checked;
        report_->recovery_states_checked += r.recovery_states;
        if (!r.ok) fail(point, at, site, units, states, to_check[r.index], message);
        reported = r.index + 1;
      }
      close(fds[0]);
      int status = 0;
      while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (pid < 0) {
        fail(point, at, site, units, states, to_check[next], std::string("cannot fork the checker: ") + std::strerror(errno));
        reported = next + 1;
      } else if (reported < to_check.size()) {
        // The child died while checking to_check[reported].
        ++report_->states_checked;
        fail(point, at, site, units, states, to_check[reported], abnormal_end(status));
        ++reported;
      }
      next = reported;
    }
  }

  [[noreturn]] void child(int fd, const CrashPoint& at, const std::vector<PendingUnit>& units,
                          const std::vector<CrashState>& states, const std::vector<size_t>& to_check, size_t from) {
    // A private copy at a new address: designs that stored absolute pointers fail here, as after a reboot.
    Mapping copy(image_.size);
    if (copy.base() == nullptr) _exit(3);
    auto recovery_persister = persist::Persister::create(persister_->config());
    for (size_t k = from; k < to_check.size(); ++k) {
      const unsigned seconds = static_cast<unsigned>(std::ceil(options_.timeout_s));
      alarm(seconds > 0 ? seconds : 1);
      build_image(tracker_->durable(), units, states[to_check[k]], copy.base());
      uint64_t recovery_states = 0;
      // A replayed state always gets its recovery crash-tested: the failure being replayed may be there.
      const bool nested = options_.recovery_budget > 0 &&
                          (options_.replay || (report_->states_checked + k) % options_.recovery_every == 0);
      Status s = nested ? recover_with_crashes({copy.base(), image_.size}, at, recovery_states)
                        : subject_->recover_and_check({copy.base(), image_.size}, *recovery_persister, at);
      alarm(0);
      ChildResult r{k, s.ok() ? 1u : 0u, static_cast<uint32_t>(s.message().size()), recovery_states};
      if (!write_all(fd, &r, sizeof r) || !write_all(fd, s.message().data(), s.message().size())) _exit(4);
    }
    _exit(0);
  }

  // Why a checker process ended without a verdict (waitpid's status).
  std::string abnormal_end(int status) const {
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "recovery hung (no result within %.1f s)", options_.timeout_s);
      return buf;
    }
    if (WIFSIGNALED(status)) return std::string("recovery crashed (") + strsignal(WTERMSIG(status)) + ")";
    return "recovery failed abnormally (exit status " + std::to_string(WEXITSTATUS(status)) +
           ", e.g. a sanitizer report on stderr)";
  }

  // Recovery on `image` with its own writes tracked: at each of its fences, up to recovery_budget crash
  // states of what it wrote so far are recovered again, from scratch, in a grandchild, against the same
  // contract. The first such failure is the result; else the recovery's own.
  Status recover_with_crashes(Image image, const CrashPoint& at, uint64_t& checked) {
    auto persister = persist::Persister::create(persister_->config());
    if (!persister) return persister.status();
    Status nested = Status::success();
    uint64_t fence = 0;
    bool running = true;  // until the subject says its recovery is done
    DurabilityTracker* self = nullptr;
    DurabilityTracker tracker(image, options_.domain, [&](const std::source_location& where) {
      ++fence;
      if (!nested.ok() || !running) return;
      const std::vector<PendingUnit> units = self->pending(options_.granularity);
      EnumerationLimits limits{.budget = options_.recovery_budget,
                               .exhaustive_limit = options_.exhaustive_limit,
                               .max_deviation = options_.max_deviation,
                               .seed = options_.seed ^ (fence * 0xbf58476d1ce4e5b9ULL)};
      for (const CrashState& state : enumerate_states(units, limits)) {
        ++checked;
        Status s = recover_in_grandchild(self->durable(), units, state, at);
        if (s.ok()) continue;
        nested = error(Errc::failed, "crash inside recovery, before its fence " + std::to_string(fence) + " at " +
                                         site_of(where) + " (" + state.strategy + "; " + describe(units, state) +
                                         "), then recovery again: " + s.message());
        return;
      }
    });
    self = &tracker;
    tracker.adopt_working_as_durable();
    persister->attach(&tracker);
    tls_recovery_running = &running;
    Status s = subject_->recover_and_check(image, *persister, at);
    tls_recovery_running = nullptr;
    persister->detach();
    return nested.ok() ? s : nested;
  }

  // One crash state of an interrupted recovery, recovered and checked in a process of its own (a new
  // address again); its verdict comes back through a pipe.
  Status recover_in_grandchild(const std::vector<std::byte>& durable, const std::vector<PendingUnit>& units,
                               const CrashState& state, const CrashPoint& at) {
    int fds[2];
    if (pipe(fds) != 0) return error(Errc::io_error, "cannot create a pipe for the nested checker");
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return error(Errc::io_error, std::string("cannot fork the nested checker: ") + std::strerror(errno));
    }
    if (pid == 0) {
      close(fds[0]);
      const unsigned seconds = static_cast<unsigned>(std::ceil(options_.timeout_s));
      alarm(seconds > 0 ? seconds : 1);
      Mapping again(image_.size);
      if (again.base() == nullptr) _exit(3);
      build_image(durable, units, state, again.base());
      auto persister = persist::Persister::create(persister_->config());
      Status s = persister ? subject_->recover_and_check({again.base(), image_.size}, *persister, at) : persister.status();
      if (!s.ok()) write_all(fds[1], s.message().data(), s.message().size());
      _exit(s.ok() ? 0 : 1);
    }
    close(fds[1]);
    std::string message;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      message.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::success();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1) return error(Errc::failed, message);
    return error(Errc::failed, abnormal_end(status));
  }

  void fail(uint64_t point, const CrashPoint& at, const std::string& site, const std::vector<PendingUnit>& units,
            const std::vector<CrashState>& states, size_t state, const std::string& property) {
    ++report_->failures;
    if (report_->details.size() >= options_.max_failure_details) return;
    Failure f;
    f.crash_point = point;
    f.state = state;
    f.at = at;
    f.site = site;
    f.strategy = states[state].strategy;
    f.persisted = describe(units, states[state]);
    f.property = property;
    report_->details.push_back(std::move(f));
  }

  const SubjectInfo& info_;
  const SimOptions& options_;
  uint64_t per_point_;
  std::unique_ptr<Subject> subject_;
  Image image_;
  const persist::Persister* persister_ = nullptr;
  DurabilityTracker* tracker_ = nullptr;
  SimReport* report_ = nullptr;
  Tracker ops_;
  std::set<std::tuple<uint64_t, uint64_t, bool>> seen_;
};

// A run with nothing but a fence counter, to spread the budget over the crash points.
Result<uint64_t> count_crash_points(const SubjectInfo& info, const SimOptions& options) {
  auto subject = info.make(options.subject);
  Mapping working(subject->image_bytes());
  if (working.base() == nullptr) return error(Errc::no_space, "cannot map the image");
  auto persister = persist::Persister::create(
      {.domain = options.domain, .flush = persist::best_line_flush(platform::CpuFeatures::host()),
       .elide_flush = false, .elide_fence = false});
  if (!persister) return persister.status();
  Image image{working.base(), subject->image_bytes()};
  subject->format(image, *persister);
  FenceCounter counter;
  persister->attach(&counter);
  Tracker ops;
  subject->run(image, *persister, ops);
  persister->detach();
  return counter.fences + 1;  // and the crash at exit
}

}  // namespace

void recovery_done() noexcept {
  if (tls_recovery_running != nullptr) *tls_recovery_running = false;
}

Result<SimReport> simulate(const SubjectInfo& info, const SimOptions& options) {
  if (options.domain == persist::Domain::none)
    return error(Errc::invalid_argument, "domain none keeps nothing durable: there is nothing to crash-test");
  if (options.budget == 0) return error(Errc::invalid_argument, "--budget must be positive");
  auto points = count_crash_points(info, options);
  if (!points) return points.status();
  const uint64_t per_point = std::max<uint64_t>(options.min_per_point, options.budget / *points);

  SimReport report;
  report.subject = info.name;
  report.domain = options.domain;
  report.granularity = options.granularity;
  const uint64_t t0 = platform::Clock::monotonic_ns();
  Simulation sim(info, options, per_point);
  PMLAB_TRY(sim.run(report));
  report.seconds = static_cast<double>(platform::Clock::monotonic_ns() - t0) / 1e9;
  return report;
}

}  // namespace pmlab::crash
