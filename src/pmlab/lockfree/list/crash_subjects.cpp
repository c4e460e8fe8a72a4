// Crash-test subjects for the persistent lists: lockfree.list.{tlog,logfree,soft,linkfree}.
//
// One thread runs a seeded stream of inserts, deletes and lookups over a few keys, so nodes are freed
// and reused (the reclaimer advances its epoch on every operation). After a crash, recovery must yield
// exactly the set after the operations that returned, or after the one in flight as well; the list must
// be well-formed, every slab node taken must be a member (no leak), and the recovered list must accept
// new updates.
#include <set>

#include "pmlab/common/random.hpp"
#include "pmlab/crash/subject.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/soft_list.hpp"

namespace pmlab::lockfree {
namespace {

constexpr uint32_t kCapacity = 24;
constexpr int kThreads = 2;
constexpr uint64_t kKeys = 6;

enum class Op { insert, remove, contains };
struct Step {
  Op op;
  uint64_t key;
};

std::vector<Step> stream(uint64_t ops, uint64_t seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 7;
  std::vector<Step> out;
  for (uint64_t i = 0; i < ops; ++i) {
    const uint64_t r = splitmix64(state);
    const uint64_t kind = r % 8;  // 4/8 insert, 3/8 delete, 1/8 lookup: the set fills and drains
    out.push_back({kind < 4 ? Op::insert : kind < 7 ? Op::remove : Op::contains, 1 + (r >> 8) % kKeys});
  }
  return out;
}

std::string describe(const std::set<uint64_t>& s) {
  std::string out = "{";
  for (uint64_t k : s) out += (out.size() > 1 ? "," : "") + std::to_string(k);
  return out + "}";
}

template <class List>
class ListSubject final : public crash::Subject {
 public:
  explicit ListSubject(const crash::SubjectOptions& o) : steps_(stream(o.ops, o.seed)) {}

  size_t image_bytes() const override { return List::bytes_needed(kCapacity, kThreads); }

  void format(crash::Image image, const persist::Persister& p) override {
    List list(image.base, image.size, p, 1);
    if (Status s = list.format(kCapacity, kThreads); !s) std::abort();
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    List list(image.base, image.size, p, 1);
    if (Status s = list.recover(); !s) std::abort();
    for (uint64_t i = 0; i < steps_.size(); ++i) {
      const Step& st = steps_[i];
      const char* name = st.op == Op::insert ? "insert " : st.op == Op::remove ? "delete " : "contains ";
      ops.begin(i, name + std::to_string(st.key));
      if (st.op == Op::insert) (void)list.insert(0, st.key);
      else if (st.op == Op::remove) (void)list.remove(0, st.key);
      else (void)list.contains(0, st.key);
      ops.end(i);
    }
  }

  Status recover_and_check(crash::Image image, const persist::Persister& p, const crash::CrashPoint& at) override {
    List list(image.base, image.size, p, 1);
    if (Status s = list.recover(); !s) return error(Errc::failed, "recovery: " + s.message());
    crash::recovery_done();
    const std::vector<uint64_t> got = list.keys();
    const std::set<uint64_t> recovered(got.begin(), got.end());
    if (recovered.size() != got.size()) return error(Errc::failed, "recovered list holds a key twice");
    std::set<uint64_t> before = state_after(at.ops_completed);
    bool ok = recovered == before;
    std::set<uint64_t> after = before;
    if (!ok && at.op_in_flight) {
      after = state_after(at.ops_completed + 1);
      ok = recovered == after;
    }
    if (!ok)
      return error(Errc::failed, "recovered " + describe(recovered) + ", expected " + describe(before) +
                                     (at.op_in_flight ? " or " + describe(after) : std::string()));
    if (Status s = list.check(); !s) return error(Errc::failed, "after recovery: " + s.message());
    // The recovered list must work: its slab bitmap must not hand out a member's node.
    for (uint64_t k = 1; k <= kKeys + 2; ++k) {
      const bool had = recovered.count(k) != 0;
      if (list.insert(1, k) == had) return error(Errc::failed, "insert " + std::to_string(k) + " after recovery disagrees");
      if (!had && !list.remove(1, k)) return error(Errc::failed, "delete " + std::to_string(k) + " after recovery failed");
    }
    if (list.keys() != got) return error(Errc::failed, "updates after recovery changed other keys");
    return list.check();
  }

 private:
  std::set<uint64_t> state_after(uint64_t n) const {
    std::set<uint64_t> s;
    for (uint64_t i = 0; i < n && i < steps_.size(); ++i) {
      if (steps_[i].op == Op::insert) s.insert(steps_[i].key);
      else if (steps_[i].op == Op::remove) s.erase(steps_[i].key);
    }
    return s;
  }

  std::vector<Step> steps_;
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
    ListDesign::tlog, "Harris list, persisted links, per-thread micro-log redone on recovery (seed 000 TLog)")};
const crash::SubjectRegistration logfree{info<LinkedList<ListDesign::logfree>>(
    ListDesign::logfree, "Harris list with fences at linearization points, eADR only (seed 000 Log-free)")};
const crash::SubjectRegistration soft{info<SoftList>(
    ListDesign::soft, "volatile list + persistent nodes with validity, rebuilt by scanning (Zuriel et al. SOFT)")};
const crash::SubjectRegistration linkfree{info<LinkFreeList>(
    ListDesign::linkfree, "nodes in PMEM, links not persisted, validity + flush flags (Zuriel et al. Link-free)")};

}  // namespace
}  // namespace pmlab::lockfree
