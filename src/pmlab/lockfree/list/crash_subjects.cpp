// Crash-test subjects for the persistent lists: lockfree.list.{tlog,logfree,soft,linkfree}.
//
// Three threads each run a seeded stream (of --ops operations) of inserts, deletes and lookups over the same few keys,
// interleaved by the simulator at persistence calls and atomic words, so an update can be seen by the other thread
// before it returns, and nodes are freed and reused (the reclaimer advances its epoch on every operation). After a
// crash the recovered set must be durably linearizable: the set after some order of the operations that
// returned (with the results they returned) and any of those in flight. The list must also be well-formed,
// every slab node taken must be a member (no leak), and the recovered list must accept new updates.
#include <optional>

#include "pmlab/common/random.hpp"
#include "pmlab/crashtest/linearizability.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/soft_list.hpp"

namespace pmlab::lockfree {
namespace {

constexpr uint32_t kCapacity = 32;
constexpr int kThreads = 3;
// Threads 0 and 1 run over three keys, so their operations meet on a key most of the time: a helping path
// (a thread that persists or unlinks what another left half done) and a lookup that sees an update in
// flight are the races the persistence calls of these designs guard against. Thread 2 runs over six, with
// more inserts, so freed nodes come back at other places in the list, and with three threads' log lines
// the slab starts where a link to a later node differs from one to an earlier node in two bytes.
constexpr uint64_t kMeetingKeys = 3;
constexpr uint64_t kKeys = 6;

enum class Op { insert, remove, contains };
struct Step {
  Op op;
  uint64_t key;
};

std::vector<Step> stream(uint64_t ops, uint64_t seed, bool wide) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 7;
  std::vector<Step> out;
  for (uint64_t i = 0; i < ops; ++i) {
    const uint64_t r = splitmix64(state);
    const uint64_t kind = r % 8;  // 3/8 insert, 3/8 delete, 2/8 lookup; wide: 4/8, 3/8, 1/8
    const uint64_t inserts = wide ? 4 : 3;
    out.push_back({kind < inserts       ? Op::insert
                   : kind < inserts + 3 ? Op::remove
                                        : Op::contains,
                   1 + (r >> 8) % (wide ? kKeys : kMeetingKeys)});
  }
  return out;
}

std::string describe(uint64_t keys) {
  std::string out = "{";
  for (uint64_t k = 1; k <= kKeys; ++k)
    if (keys >> k & 1) out += (out.size() > 1 ? "," : "") + std::to_string(k);
  return out + "}";
}

template <class List>
class ListSubject final : public crash::Subject {
 public:
  explicit ListSubject(const crash::SubjectOptions& o) {
    for (int t = 0; t < kThreads; ++t) steps_.push_back(stream(o.ops, o.seed + 977 * static_cast<uint64_t>(t), t == 2));
  }

  size_t image_bytes() const override { return List::bytes_needed(kCapacity, kThreads); }

  void format(crash::Image image, const persist::Persister& p) override {
    List list(image.base, image.size, p, 1);
    if (Status s = list.format(kCapacity, kThreads); !s) std::abort();
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    List list(image.base, image.size, p, 1);
    if (Status s = list.recover(); !s) std::abort();
    ops.run_threads(static_cast<unsigned>(kThreads), [&](unsigned t) {
      const int tid = static_cast<int>(t);
      for (uint64_t i = 0; i < steps_[t].size(); ++i) {
        const Step& st = steps_[t][i];
        const char* name = st.op == Op::insert ? "insert " : st.op == Op::remove ? "delete " : "contains ";
        ops.begin(i, "thread " + std::to_string(t) + ": " + name + std::to_string(st.key));
        bool result = false;
        if (st.op == Op::insert) result = list.insert(tid, st.key);
        else if (st.op == Op::remove) result = list.remove(tid, st.key);
        else result = list.contains(tid, st.key);
        ops.end_returning(i, result ? 1 : 0);
      }
    });
  }

  // The list's recovery rebuilds DRAM state (the slab's bitmap from the nodes it reaches; SOFT's volatile
  // list), so the recovered list is kept for the check.
  Status recover(crash::Image image, const persist::Persister& p) override {
    List& list = recovered_list_.emplace(image.base, image.size, p, 1);
    if (Status s = list.recover(); !s) return error(Errc::failed, "recovery: " + s.message());
    return Status::success();
  }

  Status check(crash::Image, const persist::Persister&, const crash::CrashPoint& at) override {
    List& list = *recovered_list_;
    const std::vector<uint64_t> got = list.keys();
    uint64_t recovered = 0;
    for (uint64_t k : got) {
      if (k == 0 || k > kKeys)
        return error(Errc::failed, "recovered list holds key " + std::to_string(k) + ", never inserted");
      if (recovered >> k & 1) return error(Errc::failed, "recovered list holds key " + std::to_string(k) + " twice");
      recovered |= uint64_t{1} << k;
    }
    auto step = [&](uint64_t set, unsigned t, uint32_t op, std::optional<uint64_t> result) -> std::optional<uint64_t> {
      const Step& st = steps_[t][op];
      const uint64_t bit = uint64_t{1} << st.key;
      const bool had = (set & bit) != 0;
      const bool returns = st.op == Op::insert ? !had : had;
      if (result && *result != (returns ? 1u : 0u)) return std::nullopt;
      if (st.op == Op::insert) return set | bit;
      if (st.op == Op::remove) return set & ~bit;
      return set;
    };
    if (!crash::durably_linearizable(at.history, uint64_t{0}, recovered, step))
      return error(Errc::failed, "recovered " + describe(recovered) + ": no order of the " +
                                     std::to_string(at.ops_completed) +
                                     " operations that returned (and those in flight), with their results, leaves it");
    if (Status s = list.check(); !s) return error(Errc::failed, "after recovery: " + s.message());
    // The recovered list must work: its slab bitmap must not hand out a member's node.
    for (uint64_t k = 1; k <= kKeys + 2; ++k) {
      const bool had = (recovered >> k & 1) != 0;
      if (list.insert(1, k) == had)
        return error(Errc::failed, "insert " + std::to_string(k) + " after recovery disagrees");
      if (!had && !list.remove(1, k))
        return error(Errc::failed, "delete " + std::to_string(k) + " after recovery failed");
    }
    if (list.keys() != got) return error(Errc::failed, "updates after recovery changed other keys");
    return list.check();
  }

 private:
  std::vector<std::vector<Step>> steps_;
  std::optional<List> recovered_list_;  // what recover() opened and recovered; check() goes on with it
};

template <class List>
crash::SubjectInfo info(ListDesign d, std::string description) {
  crash::SubjectInfo i;
  i.name = std::string("lockfree.list.") + to_string(d);
  i.description = std::move(description);
  i.domains = claimed_domains(d);
  i.make = [](const crash::SubjectOptions& o) { return std::make_unique<ListSubject<List>>(o); };
  return i;
}

const crash::SubjectRegistration tlog{info<LinkedList<ListDesign::tlog>>(
    ListDesign::tlog, "Harris list, persisted links, per-thread micro-log redone on recovery ([PMIdioBench] TLog)")};
const crash::SubjectRegistration logfree{info<LinkedList<ListDesign::logfree>>(
    ListDesign::logfree, "Harris list with fences at linearization points, eADR only ([PMIdioBench] Log-free)")};
const crash::SubjectRegistration soft{info<SoftList>(
    ListDesign::soft, "volatile list + persistent nodes with validity, rebuilt by scanning (Zuriel et al. SOFT)")};
const crash::SubjectRegistration linkfree{info<LinkFreeList>(
    ListDesign::linkfree, "nodes in PMEM, links not persisted, validity + flush flags (Zuriel et al. Link-free)")};

}  // namespace
}  // namespace pmlab::lockfree
