// A design under crash test, as the crash simulator drives it.
//
// crashtest/ is the interface a design signs to be crash-tested, and nothing of the simulator: it stands
// below the designs (docs/architecture.md), so a design includes it without reaching up into crash/,
// which holds the simulator that drives it. The names stay in namespace pmlab::crash, the simulator's
// vocabulary.
//
// The simulator (crash/simulator.hpp) gives the design an image (a region it owns), a Persister with the
// simulated durability domain attached, and an OpTracker to mark where each operation begins and returns.
// At every fence, and at exit, it enumerates crash states; each is recovered and checked as after a
// reboot (crash/checker.hpp).
//
// The contract a design signs:
//   - format() and run() are called more than once per simulation (the first run measures each crash
//     point's state space, the second checks), each time on a fresh, zero-filled image at the same
//     address, on a freshly made Subject. They must be deterministic: the same operations, the same
//     persistence calls, the same bytes. A design whose runs differ is reported, not trusted.
//   - Every byte the design means to persist goes through the Persister: stores to the image are plain
//     stores that persist only as a flush or eviction takes them; commit words go through store8, and
//     words that threads update atomically through Persister::word (PmWord). The simulator treats only
//     those as atomic; in byte granularity any other store may tear byte by byte.
//   - recover() and then check() run in a process that never ran the design: on a Subject made afresh by
//     the registered factory from the same SubjectOptions (nothing run() left in the object's members, its
//     DRAM state, survives), on a private copy of the crash image mapped at an address of its own. They
//     may read the image, the members as the constructor set them (and as recover() set them, in check()),
//     and anything recomputed from the options (the operation stream, to check against). They must not
//     follow absolute pointers stored in the image: the run's mapping is inaccessible there, and reading
//     it is a failure ("it followed an absolute pointer"). They must not depend on which state was
//     checked before in the same process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::crash {

struct Image {
  std::byte* base = nullptr;
  size_t size = 0;
};

// Brackets the operations of a run, so a crash point knows which returned and which was in flight.
class OpTracker {
 public:
  virtual ~OpTracker() = default;
  virtual void begin(uint64_t op, std::string_view label) noexcept = 0;
  virtual void end(uint64_t op) noexcept = 0;
  // As end(), with what the operation returned: a concurrent run's check needs it (an insert that found
  // its key, a lookup that saw another thread's update).
  virtual void end_returning(uint64_t op, uint64_t result) noexcept {
    (void)result;
    end(op);
  }
  // Runs body(0) .. body(threads-1) on threads of their own. Under the simulator they run one at a time,
  // handing over at persistence calls and atomic stores in a seeded, reproducible interleaving, so a run
  // stays deterministic; each thread's operations are tracked apart (CrashPoint::history). Operation
  // numbers are per thread. A body that waits for another thread must call Persister::spin_wait() in its
  // loop (there the turn passes; a spin on plain loads alone would never hand over).
  virtual void run_threads(unsigned threads, const std::function<void(unsigned)>& body);
};

// One operation beginning or returning, in a concurrent run.
struct OpEvent {
  uint32_t thread = 0;
  uint32_t op = 0;        // the thread's operation number
  uint64_t result = 0;    // what it returned (ends only)
  bool returned = false;  // false: it began
};
// The events a concurrent run may record (a crash point carries them all to its checker).
inline constexpr size_t kMaxOpEvents = 1024;

// Where a crash state was taken.
struct CrashPoint {
  uint64_t ops_completed = 0;  // operations 0 .. ops_completed-1 returned before the crash
  bool op_in_flight = false;   // operation ops_completed had begun and not returned
  // The crash came just before this durability point (a fence; under eADR also a locked read-modify-write),
  // counted from 1, or at exit.
  uint64_t fence_index = 0;
  bool at_exit = false;
  std::string op_label;  // label of the operation in flight, or of the last one
  // A concurrent run (run_threads): every operation's beginning and return before the crash, in the order
  // they happened; a check looks for a linearization of it (crashtest/linearizability.hpp). Empty otherwise,
  // and then ops_completed / op_in_flight say it all.
  std::vector<OpEvent> history;
};

class Subject {
 public:
  virtual ~Subject() = default;
  virtual size_t image_bytes() const = 0;
  // Lays out an empty structure on a zero-filled image. Not observed: the formatted image is the initial
  // durable image, and its persistence calls are not crash-tested (nor mutated).
  virtual void format(Image image, const persist::Persister& persister) = 0;
  // Runs the operation stream, calling ops.begin(i, label) / ops.end(i) around operation i. Called more
  // than once, on a fresh Subject each time: must be deterministic.
  virtual void run(Image image, const persist::Persister& persister, OpTracker& ops) = 0;
  // The design's own recovery, as after a reboot, on a fresh Subject in a checker process. Its persistence
  // calls are crash-tested like run()'s: a crash before any of its fences, or at its end, must recover
  // again (on another fresh Subject) to the same contract. It returns with its repairs durable: a line it
  // wrote and left pending is a failure, since new work would build on it. What recovery found that the
  // check needs (a count, where a log ends) it keeps in members. A failed Status: the image cannot be
  // recovered, and the Status says why.
  virtual Status recover(Image image, const persist::Persister& persister) = 0;
  // After recover() succeeded, on the same Subject and image: the structural invariants and the durability
  // contract — every operation before `at.ops_completed` is present, none after it, and an in-flight one
  // wholly present or wholly absent. It may run new operations on the recovered structure (that they work
  // is part of the contract); they are not crash-tested. A failed Status names what broke.
  virtual Status check(Image image, const persist::Persister& persister, const CrashPoint& at) = 0;
};

// Where a crash stream's counters, sequence numbers, LSNs and tickets start: a few steps below 2^32, so that
// even a short stream (--quick's sixteen operations) carries them across it. A torn 8-byte word, the new
// low half under the old high half as two 4-byte stores leave it (the simulator's split mutation, or a
// design that forgot store8), is observable only where a store changes both halves, and the store that
// carries a counter across 2^32 does: counters that stay small would let a commit word that can tear pass.
inline constexpr uint64_t kCounterBase = (uint64_t{1} << 32) - 4;

struct SubjectOptions {
  uint64_t ops = 64;  // length of the operation stream
  uint64_t seed = 1;  // for designs whose stream is randomized
};

struct SubjectInfo {
  std::string name;  // e.g. "log.zero", "selftest.commit-record"
  std::string description;
  std::vector<persist::Domain> domains{persist::Domain::adr, persist::Domain::eadr};  // domains it claims
  bool deliberately_broken = false;  // a variant the simulator must catch; excluded from `all`
  std::function<std::unique_ptr<Subject>(const SubjectOptions&)> make;
};

class SubjectRegistry {
 public:
  static SubjectRegistry& instance();
  void add(SubjectInfo info);
  const std::vector<SubjectInfo>& all() const { return subjects_; }
  const SubjectInfo* find(std::string_view name) const;

 private:
  std::vector<SubjectInfo> subjects_;
};

struct SubjectRegistration {
  explicit SubjectRegistration(SubjectInfo info) { SubjectRegistry::instance().add(std::move(info)); }
};

}  // namespace pmlab::crash
