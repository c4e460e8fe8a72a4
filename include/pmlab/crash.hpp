// pmlab/crash.hpp: crash-test a design of your own with pmlab's simulator, out of tree.
//
// Write the design against pmlab::Persister (pmlab/persist.hpp: every byte it means to persist goes through
// flush, fence, persist, store8 or the atomic word operations), wrap it in a CrashSubject, and register it.
// The same design runs for real on a pmlab::Pool's Persister (pmlab/pool.hpp):
//
//   class MyList final : public pmlab::CrashSubject { ... };
//   PMLAB_CRASH_SUBJECT(my_list, "mine.list", "my persistent list", false, MyList);
//
// Build it as a shared object (it needs pmlab's headers only, nothing to link) and load it:
//
//   pmlab crash --load ./libmine.so mine.list [--domain adr|eadr] [--granularity ...] [--mutate] ...
//
// The simulator runs the subject's stream, enumerates the states a crash could leave at every fence and
// at the end (each line changed since it was last durable: its durable content, its content at a
// write-back since, or its latest), and for each runs recover() then check() on a fresh subject in a
// fresh process. Everything `pmlab crash` gives its own designs applies: domains, granularities, budgets,
// --mutate (each persistence call site dropped or weakened in turn: a mutation score), --shard, replay,
// results.json and the report. docs/crash-simulator.md describes the model; docs/library.md this API.
//
// Needs C++20 (call sites are std::source_location). A stream may run threads (CrashOps::run_threads).
#ifndef PMLAB_CRASH_HPP
#define PMLAB_CRASH_HPP

#if __cplusplus < 202002L
#error "pmlab/crash.hpp needs C++20 (call sites are std::source_location)"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <pmlab/persist.hpp>

namespace pmlab {
inline namespace v0 {

// The region a subject owns: zero-filled before format(), a private copy of a crash state for recover().
struct CrashImage {
  std::byte* base = nullptr;  // 64-byte aligned
  size_t size = 0;            // image_bytes()
};

// Brackets each operation of a run: a crash point then knows which returned and which was in flight.
class CrashOps {
 public:
  // Operation `op` (0, 1, … in order; in a concurrent run, per thread) begins; `label` names its kind in
  // failure reports ("push").
  virtual void begin(uint64_t op, const char* label) noexcept = 0;
  // Operation `op` returned: everything it promised must survive a crash from here on.
  virtual void end(uint64_t op) noexcept = 0;
  // As end(), with what the operation returned: a concurrent run's check reads it from the history (an
  // insert that found its key, a read that saw another thread's write).
  virtual void end_returning(uint64_t op, uint64_t result) noexcept = 0;
  // Runs body(arg, 0) … body(arg, threads - 1) as threads of their own and returns when all have. Under
  // the simulator they take turns at persistence calls, store8 and the atomic word operations, in a
  // seeded interleaving, so a run stays deterministic; `pmlab crash` tries several interleavings and
  // preempts a thread at each persistence call in turn. Each thread's operations are numbered from 0 and
  // tracked apart (CrashPoint::history). A thread that waits for another must call
  // Persister::spin_wait() in its loop (a spin on plain loads alone would never hand the turn over). At
  // most 4 threads.
  virtual void run_threads(unsigned threads, void (*body)(void* arg, unsigned thread), void* arg) = 0;
  // As above, with any callable taking the thread's number.
  template <class Body>
  void run_threads(unsigned threads, Body&& body) {
    using B = std::remove_reference_t<Body>;
    run_threads(
        threads, [](void* b, unsigned thread) { (*static_cast<B*>(b))(thread); },
        const_cast<void*>(static_cast<const void*>(std::addressof(body))));
  }

 protected:
  ~CrashOps() = default;
};

// One operation beginning or returning in a concurrent run.
struct CrashEvent {
  uint32_t thread = 0;    // the thread (0 .. threads - 1) of run_threads
  uint32_t op = 0;        // the thread's operation number
  uint64_t result = 0;    // what it returned (end_returning; 0 for end), on a return only
  bool returned = false;  // false: it began
};

// Where a crash state was taken.
struct CrashPoint {
  uint64_t ops_completed = 0;  // operations 0 .. ops_completed-1 returned before the crash (concurrent: how many)
  bool op_in_flight = false;   // operation ops_completed had begun and not returned (concurrent: any)
  uint64_t fence_index = 0;    // the crash came just before this fence (from 1), unless at_exit
  bool at_exit = false;        // the crash came after the stream ended
  // A concurrent run (run_threads): every beginning and return before the crash, in the order they
  // happened. The recovered state must be that of some order of the operations that respects it (durable
  // linearizability: each returned operation in, each one not begun out, one in flight either way).
  // Empty for a single-threaded run.
  std::vector<CrashEvent> history;
};

// What a subject is made with: from `pmlab crash`'s options, the same for every subject of a run.
struct CrashOptions {
  uint64_t ops = 64;  // length of the operation stream (`pmlab crash --ops`)
  uint64_t seed = 1;  // for streams that are randomized (`--seed`)
};

// A design under crash test. The contract (as pmlab's own designs sign it, docs/crash-simulator.md):
//   - format() and run() are called more than once, each time on a fresh subject and a fresh zero-filled
//     image at the same address; they must be deterministic (the same calls, the same bytes).
//   - recover() and then check() run on a subject made afresh from the same options, in a process that
//     never ran the design, on a private copy of the crash image at another address: they must not follow
//     absolute pointers stored in the image, and may keep in members what recover() found for check().
//   - recover() returns "" once its repairs are durable (its own fences are crash-tested too), or why
//     the image cannot be recovered. check() returns "" when the recovered state keeps the contract
//     (every operation before at.ops_completed present, none after, an in-flight one whole or absent),
//     else what broke.
class CrashSubject {
 public:
  virtual ~CrashSubject() = default;
  // The bytes of the region the design needs (the same for every subject made from the same options).
  virtual size_t image_bytes() const = 0;
  // Lays out an empty structure. Not crash-tested: the formatted image is the initial durable one.
  virtual void format(CrashImage image, const Persister& persister) = 0;
  virtual void run(CrashImage image, const Persister& persister, CrashOps& ops) = 0;
  virtual std::string recover(CrashImage image, const Persister& persister) = 0;
  virtual std::string check(CrashImage image, const Persister& persister, const CrashPoint& at) = 0;
};

}  // namespace v0
}  // namespace pmlab

// What `pmlab crash --load` reads from a shared object: its subjects, by one exported C function.
extern "C" {
struct pmlab_crash_subject_entry {
  const char* name;         // "mine.list": a dotted name of letters, digits, '-', '_'
  const char* description;  // one line for `pmlab crash --list`
  int deliberately_broken;  // 1: a variant the simulator must catch (left out of `all`, expected to fail)
  pmlab::CrashSubject* (*make)(const pmlab::CrashOptions* options);  // a new subject, owned by the caller
};
}

// The registration a subject's shared object compiles in (pmlab itself, which reads it, defines
// PMLAB_CRASH_HOST and leaves it out).
#ifndef PMLAB_CRASH_HOST
namespace pmlab {
inline namespace v0 {
namespace detail {
inline std::vector<pmlab_crash_subject_entry>& crash_subjects() {
  static std::vector<pmlab_crash_subject_entry> subjects;
  return subjects;
}
struct CrashSubjectRegistration {
  explicit CrashSubjectRegistration(pmlab_crash_subject_entry entry) { crash_subjects().push_back(entry); }
};
}  // namespace detail
}  // namespace v0
}  // namespace pmlab

// The entry point `pmlab crash --load` looks up: the subjects this shared object registered.
extern "C" [[gnu::used, gnu::visibility("default")]] inline const pmlab_crash_subject_entry* pmlab_crash_subjects_v0(
    size_t* count) {
  *count = pmlab::detail::crash_subjects().size();
  return pmlab::detail::crash_subjects().data();
}

// Registers TYPE (a CrashSubject constructible from const pmlab::CrashOptions&) as NAME; a declaration, ended
// by a semicolon. ID is a C++ identifier unique in the shared object; TYPE, the last argument, may hold commas
// (Design<a, b>).
#define PMLAB_CRASH_SUBJECT(ID, NAME, DESCRIPTION, BROKEN, ...)                                                    \
  static const ::pmlab::detail::CrashSubjectRegistration pmlab_crash_subject_##ID {                                \
    pmlab_crash_subject_entry {                                                                                    \
      NAME, DESCRIPTION, (BROKEN) ? 1 : 0,                                                                         \
          [](const ::pmlab::CrashOptions* options) -> ::pmlab::CrashSubject* { return new __VA_ARGS__(*options); } \
    }                                                                                                              \
  }
#endif  // PMLAB_CRASH_HOST

#endif  // PMLAB_CRASH_HPP
