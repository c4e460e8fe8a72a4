#include "pmlab/crash/checker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "pmlab/crash/checker_layout.hpp"
#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/image_mapping.hpp"

namespace pmlab::crash {
namespace {

using namespace checker_layout;

// Everything a checker needs, inherited through fork.
struct Context {
  const SubjectInfo* info;
  CheckerOptions options;
  Image run_image;
  Layout layout;
  int job_r, result_w, spawn_r;
};

Breadcrumb* g_crumb = nullptr;  // this checker's, for the fault handler

void on_fault(int sig, siginfo_t* si, void*) {
  if (g_crumb != nullptr) g_crumb->fault.store(reinterpret_cast<uintptr_t>(si->si_addr));
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_fault_handlers() {
  static char stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) sigaction(sig, &sa, nullptr);
}

void arm(double seconds) {
  const auto s = static_cast<unsigned>(std::ceil(seconds));
  alarm(s > 0 ? s : 1);
}

using Mapping = ImageMapping;

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%zx", static_cast<size_t>(v));
  return buf;
}

// Watches a recovery that runs to its end (no crash points in it): with a mutant, a tracker of its writes,
// so that whether the mutant made a difference is known, not assumed; otherwise the call sites it reaches.
class RecoveryObserver {
 public:
  RecoveryObserver(const Context& ctx, CallSites& sites, Image image, persist::Persister& persister) : sites_(sites) {
    if (ctx.options.mutant) {
      tracker_.emplace(image, ctx.options.domain, nullptr);
      tracker_->set_call_sites(&sites);
      persister.attach(&*tracker_);
    } else {
      persister.attach(&sites_);
    }
  }
  void finish() {
    if (tracker_) tracker_->finish();
  }

 private:
  std::optional<DurabilityTracker> tracker_;
  CallSiteObserver sites_;
};

// One state's recovery with its writes tracked: at each of its fences and at its end, crash states of
// what it wrote are recovered again from scratch and must meet the same contract.
class RecoveryCrash {
 public:
  RecoveryCrash(const Context& ctx, const persist::Persister& persister, CallSites& sites, Mapping& again, Image image,
                const CrashPoint& at, uint64_t seed)
      : ctx_(ctx),
        persister_(persister),
        sites_(sites),
        again_(again),
        image_(image),
        start_(image.base, image.base + image.size),
        at_(at),
        seed_(seed) {}

  Status run(uint64_t& states) {
    auto subject = ctx_.info->make(ctx_.options.subject);
    DurabilityTracker tracker(image_, ctx_.options.domain,
                              [this](const std::source_location& where) { crash_point(false, &where); });
    tracker.set_call_sites(&sites_);
    tracker.set_granularity(ctx_.options.granularity);
    tracker_ = &tracker;
    persist::Persister persister = persister_;
    persister.attach(&tracker);
    sites_.record(ctx_.options.record_sites);
    arm(ctx_.options.timeout_s);
    Status s = subject->recover(image_, persister);
    sites_.record(false);
    if (s.ok()) {
      tracker.capture();
      crash_point(true, nullptr);
    }
    running_ = false;
    // The check's own operations are new work, under another contract: not crash-tested. It runs even
    // after a crash of the recovery failed: a state that fails its own check is that plain failure, not a
    // recovery crash (whose "recovery again" would only repeat it when the recovery wrote nothing).
    if (s.ok()) s = subject->check(image_, persister, at_);
    alarm(0);
    persister.detach();
    tracker.finish();
    states = states_;
    return s.ok() ? failure_ : s;
  }

 private:
  void crash_point(bool end, const std::source_location* where) {
    ++points_;
    if (!running_ || !failure_.ok()) return;
    CrashSpace space = make_space(tracker_->pending(), tracker_->durable(), ctx_.options.granularity);
    const Exploration e = explore(space, ctx_.options.recovery_budget, seed_ ^ (points_ * 0xbf58476d1ce4e5b9ULL));
    for (const CrashState& state : e.states) {
      build_image(tracker_->durable(), space, state, again_.base());
      // Nothing of what recovery wrote in it: the state itself, which the plain check judges after recovery.
      if (std::equal(start_.begin(), start_.end(), again_.base())) continue;
      ++states_;
      const std::string detail = (end ? std::string("crash at the end of recovery")
                                      : "crash inside recovery, before its fence " +
                                            std::to_string(tracker_->fences()) + " at " + site_of(*where)) +
                                 " (" + to_string(state.strategy) + "; " + describe(space, state) + ")";
      Status s = recover_again(detail);
      if (!s.ok()) {
        failure_ = error(Errc::failed, detail + ", then recovery again: " + s.message());
        break;
      }
    }
    // A recovery returns with its repairs durable: whatever it left pending, later operations would build
    // on, and a crash would take from under them.
    if (end && failure_.ok() && !space.lines.empty()) {
      std::string lines;
      for (size_t i = 0; i < space.lines.size() && i < 8; ++i) lines += (i ? ", " : "") + hex(space.lines[i].offset);
      if (space.lines.size() > 8) lines += ", …";
      failure_ = error(Errc::failed, "recovery returned with " + std::to_string(space.lines.size()) +
                                         " line(s) it wrote not yet durable (" + lines +
                                         "): a crash now would take its repair from under what runs next");
    }
    arm(ctx_.options.timeout_s);
  }

  // Recovers again the image crash_point() built in `again_`.
  Status recover_again(const std::string& detail) {
    Breadcrumb& crumb = *g_crumb;
    copy_text(crumb.detail, sizeof crumb.detail, detail);
    crumb.phase.store(kRecoveryAgain);
    mprotect(image_.base, round_pages(image_.size), PROT_NONE);
    Status s;
    {
      auto subject = ctx_.info->make(ctx_.options.subject);
      const Image again{again_.base(), image_.size};
      persist::Persister persister = persister_;
      RecoveryObserver observer(ctx_, sites_, again, persister);
      arm(ctx_.options.timeout_s);
      s = subject->recover(again, persister);
      if (s.ok()) s = subject->check(again, persister, at_);
      alarm(0);
      observer.finish();
    }
    mprotect(image_.base, round_pages(image_.size), PROT_READ | PROT_WRITE);
    crumb.phase.store(kRecovery);
    return s;
  }

  const Context& ctx_;
  const persist::Persister& persister_;
  CallSites& sites_;
  Mapping& again_;
  Image image_;
  const std::vector<std::byte> start_;  // the state as recovery found it
  CrashPoint at_;
  uint64_t seed_;
  DurabilityTracker* tracker_ = nullptr;
  bool running_ = true;
  uint64_t points_ = 0;
  uint64_t states_ = 0;
  Status failure_;
};

CheckVerdict check_slot(const Context& ctx, const persist::Persister& persister, CallSites& sites, Mapping& again,
                        size_t slot) {
  const SlotHeader& h = *ctx.layout.header(slot);
  CrashPoint at;
  at.ops_completed = h.ops_completed;
  at.op_in_flight = h.op_in_flight != 0;
  at.fence_index = h.fence_index;
  at.at_exit = h.at_exit != 0;
  at.history.assign(h.history, h.history + h.history_len);
  const Image image{ctx.layout.image(slot), ctx.run_image.size};
  CheckVerdict v;
  Status s;
  if (h.crash_recovery) {
    RecoveryCrash recovery(ctx, persister, sites, again, image, at, h.recovery_seed);
    s = recovery.run(v.recovery_states);
  } else {
    auto subject = ctx.info->make(ctx.options.subject);
    persist::Persister observed = persister;
    RecoveryObserver observer(ctx, sites, image, observed);
    // The recovery's call sites are mutation targets; the check's new operations are not crash-tested.
    sites.record(ctx.options.record_sites);
    arm(ctx.options.timeout_s);
    s = subject->recover(image, observed);
    sites.record(false);
    if (s.ok()) s = subject->check(image, observed, at);
    alarm(0);
    observer.finish();
  }
  v.ok = s.ok();
  v.message = s.message();
  return v;
}

[[noreturn]] void checker_main(const Context& ctx, unsigned index) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  close(ctx.spawn_r);
  signal(SIGCHLD, SIG_DFL);
  g_crumb = &ctx.layout.crumbs()[index];
  install_fault_handlers();
  auto persister = persist::Persister::create(ctx.options.config);
  Mapping again(ctx.run_image.size);
  if (!persister || again.base() == nullptr) _exit(3);
  CallSites sites(ctx.options.mutant);
  std::set<SiteKey> logged;
  SiteLog& log = ctx.layout.sites()[index];
  for (;;) {
    uint32_t slot = 0;
    if (!read_all(ctx.job_r, &slot, sizeof slot)) _exit(0);
    g_crumb->fault.store(0);
    g_crumb->phase.store(kRecovery);
    g_crumb->slot.store(static_cast<int32_t>(slot));
    CheckVerdict v = check_slot(ctx, *persister, sites, again, slot);
    SlotHeader& h = *ctx.layout.header(slot);
    h.ok = v.ok ? 1 : 0;
    h.recovery_states = v.recovery_states;
    copy_text(h.message, sizeof h.message, v.message);
    h.message_len = static_cast<uint32_t>(std::strlen(h.message));
    for (const auto& [key, function] : sites.seen()) {
      if (logged.contains(key) || log.count.load() >= kSitesPerChecker) continue;
      SiteEntry& e = log.entries[log.count.load()];
      e.call = static_cast<uint8_t>(key.call);
      e.line = key.line;
      e.column = key.column;
      copy_text(e.file, sizeof e.file, key.file);
      copy_text(e.function, sizeof e.function, function);
      log.count.fetch_add(1);
      logged.insert(key);
    }
    store_effects(*g_crumb, sites.effects());
    g_crumb->phase.store(kIdle);
    g_crumb->slot.store(-1);
    const Message m{MessageKind::verdict, index, static_cast<int32_t>(slot), 0};
    if (!write_all(ctx.result_w, &m, sizeof m)) _exit(4);
  }
}

int g_child_signal_fd = -1;
void on_child(int) {
  const char byte = 0;
  [[maybe_unused]] ssize_t n = write(g_child_signal_fd, &byte, 1);
}

// The template: forks checkers on request and reports each one's end.
[[noreturn]] void template_main(const Context& ctx) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Nothing here or in a checker may reach the run's image: reserve its range inaccessible.
  if (mmap(ctx.run_image.base, round_pages(ctx.run_image.size), PROT_NONE,
           MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
    _exit(5);
  int child_pipe[2];
  if (pipe2(child_pipe, O_NONBLOCK | O_CLOEXEC) != 0) _exit(5);
  g_child_signal_fd = child_pipe[1];
  struct sigaction sa {};
  sa.sa_handler = on_child;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, nullptr);
  std::map<pid_t, unsigned> live;
  auto spawn = [&](unsigned index) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(child_pipe[0]);
      close(child_pipe[1]);
      checker_main(ctx, index);
    }
    if (pid > 0) live[pid] = index;
  };
  for (unsigned i = 0; i < ctx.options.jobs; ++i) spawn(i);
  bool accepting = true;
  for (;;) {
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      auto it = live.find(pid);
      if (it == live.end()) continue;
      const Message m{MessageKind::checker_ended, it->second, -1, status};
      live.erase(it);
      write_all(ctx.result_w, &m, sizeof m);
    }
    if (!accepting && live.empty()) _exit(0);
    pollfd fds[2] = {{child_pipe[0], POLLIN, 0}, {accepting ? ctx.spawn_r : -1, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) _exit(6);
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (read(child_pipe[0], drain, sizeof drain) > 0) {}
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      uint32_t index = 0;
      if (read_all(ctx.spawn_r, &index, sizeof index)) spawn(index);
      else accepting = false;
    }
  }
}

}  // namespace

struct CheckerPool::Shared {
  Layout layout;
  MutationEffects ended;  // what mutated calls did in the recoveries of checkers that ended
  struct sigaction old_sigpipe {};
};

Result<std::unique_ptr<CheckerPool>> CheckerPool::start(const SubjectInfo& info, const CheckerOptions& options,
                                                        Image run_image) {
  std::unique_ptr<CheckerPool> pool(new CheckerPool());
  pool->info_ = &info;
  pool->options_ = options;
  pool->options_.jobs = std::clamp(options.jobs, 1u, kMaxCheckers);
  pool->run_image_ = run_image;
  auto* shared = new Shared();
  pool->shared_ = shared;
  Layout& layout = shared->layout;
  layout.image_stride = round_pages(std::max<size_t>(run_image.size, 1));
  // Enough slots to keep every checker busy while the run goes on, within a bound on memory.
  const size_t wanted = 4 * static_cast<size_t>(pool->options_.jobs) + 2;
  layout.slots = std::max<size_t>(2, std::min(wanted, (size_t{512} << 20) / layout.image_stride));
  void* base = mmap(nullptr, layout.bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return error(Errc::no_space, "cannot map " + std::to_string(layout.bytes()) + " bytes for crash images");
  layout.base = static_cast<std::byte*>(base);
  pool->shared_bytes_ = layout.bytes();
  for (unsigned i = 0; i < kMaxCheckers; ++i) {
    new (&layout.crumbs()[i]) Breadcrumb{};
    layout.crumbs()[i].slot.store(-1);
    new (&layout.sites()[i]) SiteLog{};
  }
  for (size_t s = 0; s < layout.slots; ++s) pool->free_.push_back(layout.slots - 1 - s);
  pool->slots_ = layout.slots;

  int job[2], result[2], spawn[2];
  if (pipe(job) != 0 || pipe(result) != 0 || pipe(spawn) != 0)
    return error(Errc::io_error, std::string("cannot create the crash checkers' pipes: ") + std::strerror(errno));
  // A write to a pipe whose readers are gone must be an error here, not a signal that ends the run.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &shared->old_sigpipe);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return error(Errc::io_error, std::string("cannot fork the crash checkers: ") + std::strerror(errno));
  if (pid == 0) {
    close(job[1]);
    close(result[0]);
    close(spawn[1]);
    const Context ctx{&info, pool->options_, run_image, layout, job[0], result[1], spawn[0]};
    template_main(ctx);
  }
  close(job[0]);
  close(result[1]);
  close(spawn[0]);
  pool->template_pid_ = pid;
  pool->job_fd_ = job[1];
  pool->result_fd_ = result[0];
  pool->spawn_fd_ = spawn[1];
  return pool;
}

CheckerPool::~CheckerPool() {
  for (int* fd : {&job_fd_, &result_fd_, &spawn_fd_})
    if (*fd >= 0) close(*fd);
  if (template_pid_ > 0) {
    kill(template_pid_, SIGKILL);
    while (waitpid(template_pid_, nullptr, 0) < 0 && errno == EINTR) {}
  }
  if (shared_ != nullptr) {
    sigaction(SIGPIPE, &shared_->old_sigpipe, nullptr);
    if (shared_->layout.base != nullptr) munmap(shared_->layout.base, shared_bytes_);
    delete shared_;
  }
}

std::byte* CheckerPool::image(size_t slot) const noexcept { return shared_->layout.image(slot); }

Result<size_t> CheckerPool::acquire(const OnVerdict& on_verdict) {
  while (free_.empty()) PMLAB_TRY(pump(on_verdict));
  const size_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void CheckerPool::submit(size_t slot, uint64_t tag, const CheckRequest& request) {
  SlotHeader& h = *shared_->layout.header(slot);
  h.tag = tag;
  h.ops_completed = request.at.ops_completed;
  h.fence_index = request.at.fence_index;
  h.op_in_flight = request.at.op_in_flight ? 1 : 0;
  h.at_exit = request.at.at_exit ? 1 : 0;
  h.crash_recovery = request.crash_recovery ? 1 : 0;
  h.recovery_seed = request.recovery_seed;
  h.history_len = static_cast<uint32_t>(std::min(request.at.history.size(), kMaxOpEvents));
  std::copy_n(request.at.history.begin(), h.history_len, h.history);
  ++outstanding_;
  const auto token = static_cast<uint32_t>(slot);
  if (!write_all(job_fd_, &token, sizeof token)) {
    // No checker can take it: the verdict is a failure, delivered by the next pump.
    h.ok = 0;
    copy_text(h.message, sizeof h.message, "the crash checkers are gone");
  }
}

Status CheckerPool::pump(const OnVerdict& on_verdict) {
  Message m{};
  if (!read_all(result_fd_, &m, sizeof m))
    return error(Errc::failed, "the crash checkers' template ended unexpectedly");
  const Layout& layout = shared_->layout;
  if (m.kind == MessageKind::verdict) {
    const SlotHeader& h = *layout.header(static_cast<size_t>(m.slot));
    CheckVerdict v{h.ok != 0, std::string(h.message, h.message_len), h.recovery_states};
    --outstanding_;
    free_.push_back(static_cast<size_t>(m.slot));
    on_verdict(h.tag, std::move(v));
    return Status::success();
  }
  // A checker ended: if it was checking a state, that state failed.
  Breadcrumb& crumb = layout.crumbs()[m.checker];
  shared_->ended += take_effects(crumb);
  const int32_t slot = crumb.slot.exchange(-1);
  if (slot >= 0) {
    const SlotHeader& h = *layout.header(static_cast<size_t>(slot));
    const int status = m.status;
    std::string what;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      char buf[80];
      std::snprintf(buf, sizeof buf, "recovery hung (no result within %.1f s)", options_.timeout_s);
      what = buf;
    } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS)) {
      const uintptr_t fault = crumb.fault.load();
      const auto run = reinterpret_cast<uintptr_t>(run_image_.base);
      const auto first = reinterpret_cast<uintptr_t>(layout.image(static_cast<size_t>(slot)));
      if (fault >= run && fault < run + run_image_.size) {
        what = "recovery read " + hex(fault) + ", inside the run's own mapping of the image (offset " +
               hex(fault - run) + "): it followed an absolute pointer, which a reboot leaves dangling";
      } else if (crumb.phase.load() == kRecoveryAgain && fault >= first && fault < first + run_image_.size) {
        what = "recovery read " + hex(fault) + ", inside the image of the interrupted recovery (offset " +
               hex(fault - first) + "): an absolute pointer written during recovery";
      } else {
        what =
            std::string("recovery crashed (") + strsignal(WTERMSIG(status)) + (fault ? " at " + hex(fault) : "") + ")";
      }
    } else if (WIFSIGNALED(status)) {
      what = std::string("recovery crashed (") + strsignal(WTERMSIG(status)) + ")";
    } else {
      what = "recovery failed abnormally (exit status " + std::to_string(WEXITSTATUS(status)) +
             ", e.g. a sanitizer report on stderr)";
    }
    if (crumb.phase.load() == kRecoveryAgain) what = std::string(crumb.detail) + ", then recovery again: " + what;
    crumb.phase.store(kIdle);
    --outstanding_;
    free_.push_back(static_cast<size_t>(slot));
    on_verdict(h.tag, CheckVerdict{false, what, 0});
  }
  if (job_fd_ >= 0) {  // states may still be queued: a fresh checker takes this one's place
    const uint32_t index = m.checker;
    if (!write_all(spawn_fd_, &index, sizeof index)) return error(Errc::failed, "cannot start a fresh crash checker");
  }
  return Status::success();
}

Status CheckerPool::finish(const OnVerdict& on_verdict) {
  while (outstanding_ > 0) PMLAB_TRY(pump(on_verdict));
  close(job_fd_);
  job_fd_ = -1;
  close(spawn_fd_);
  spawn_fd_ = -1;
  Message m{};
  while (read_all(result_fd_, &m, sizeof m)) {}
  close(result_fd_);
  result_fd_ = -1;
  while (waitpid(template_pid_, nullptr, 0) < 0 && errno == EINTR) {}
  template_pid_ = -1;
  return Status::success();
}

MutationEffects CheckerPool::mutation_effects() const {
  MutationEffects all = shared_->ended;
  for (unsigned i = 0; i < kMaxCheckers; ++i) all += load_effects(shared_->layout.crumbs()[i]);
  return all;
}

std::map<SiteKey, std::string> CheckerPool::sites() const {
  std::map<SiteKey, std::string> out;
  for (unsigned i = 0; i < kMaxCheckers; ++i) {
    const SiteLog& log = shared_->layout.sites()[i];
    for (uint32_t k = 0; k < log.count.load() && k < kSitesPerChecker; ++k) {
      const SiteEntry& e = log.entries[k];
      out.emplace(SiteKey{static_cast<persist::Call>(e.call), e.file, e.line, e.column}, e.function);
    }
  }
  return out;
}

}  // namespace pmlab::crash
