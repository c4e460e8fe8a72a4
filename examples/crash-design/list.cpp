// A design of your own, crash-tested by pmlab out of tree: a persistent stack of records (push only), and
// a broken twin that publishes a record before it is durable.
//
//   image:  [head][bump][nodes ...]       a node: [next][seq][value][check]
//   push:   carve a node past `bump` and fill it; write it back, store8 the new bump and persist both with
//           one fence; then store8 the head (the commit) and persist it. Links are offsets, never pointers.
//   recover: nothing to repair (a node carved but never linked is unreachable); check: walk the stack.
//
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=<pmlab prefix> && cmake --build build
//   pmlab crash --load build/libcrash_design.so mine.stack mine.broken-stack --include-broken
#include <pmlab/crash.hpp>

#include <cstring>
#include <string>

namespace {

struct Node {
  uint64_t next, seq, value, check;
};
struct Header {
  uint64_t head, bump;
};

constexpr uint64_t kFirstNode = 64;

uint64_t value_of(uint64_t seq) { return seq * 0x9E3779B97F4A7C15ull + 7; }
uint64_t check_of(const Node& n) { return (n.next ^ n.seq * 31 ^ n.value * 131) + 1; }

template <bool kBroken>
class Stack final : public pmlab::CrashSubject {
 public:
  explicit Stack(const pmlab::CrashOptions& o) : ops_(o.ops) {}

  size_t image_bytes() const override { return kFirstNode + (ops_ + 1) * sizeof(Node); }

  void format(pmlab::CrashImage image, const pmlab::Persister& p) override {
    auto* h = reinterpret_cast<Header*>(image.base);
    h->head = 0;
    h->bump = kFirstNode;
    p.persist(h, sizeof *h);
  }

  void run(pmlab::CrashImage image, const pmlab::Persister& p, pmlab::CrashOps& ops) override {
    auto* h = reinterpret_cast<Header*>(image.base);
    for (uint64_t op = 0; op < ops_; ++op) {
      ops.begin(op, "push");
      const uint64_t at = h->bump;
      auto* n = reinterpret_cast<Node*>(image.base + at);
      n->next = h->head;
      n->seq = op;
      n->value = value_of(op);
      n->check = check_of(*n);
      // One fence makes the node and the bump durable before the head names the node. (A fence of the
      // node's own here would be redundant: `pmlab crash --mutate` reports it as a surviving mutant.)
      if (!kBroken) p.flush(n, sizeof *n);    // the twin's bug: the node is never written back
      p.store8(&h->bump, at + sizeof(Node));  // a word check() reads: stored whole, never torn
      p.persist(&h->bump, 8);
      p.store8(&h->head, at);
      p.persist(&h->head, 8);
      ops.end(op);
    }
  }

  std::string recover(pmlab::CrashImage, const pmlab::Persister&) override { return {}; }

  std::string check(pmlab::CrashImage image, const pmlab::Persister&, const pmlab::CrashPoint& at) override {
    const auto* h = reinterpret_cast<const Header*>(image.base);
    uint64_t count = 0, expect_seq = UINT64_MAX;
    for (uint64_t off = h->head; off != 0; ++count) {
      if (off < kFirstNode || off + sizeof(Node) > image.size || off >= h->bump)
        return "a link points outside the carved nodes (offset " + std::to_string(off) + ")";
      Node n;
      std::memcpy(&n, image.base + off, sizeof n);
      if (n.check != check_of(n) || n.value != value_of(n.seq)) return "node " + std::to_string(n.seq) + " is torn";
      if (expect_seq != UINT64_MAX && n.seq != expect_seq) return "the stack skips a push";
      expect_seq = n.seq - 1;
      off = n.next;
    }
    if (count != at.ops_completed && !(at.op_in_flight && count == at.ops_completed + 1))
      return std::to_string(count) + " pushes survived, " + std::to_string(at.ops_completed) + " had returned";
    return {};
  }

 private:
  uint64_t ops_;
};

}  // namespace

PMLAB_CRASH_SUBJECT(stack, "mine.stack", "a persistent stack of records (example)", false, Stack<false>);
PMLAB_CRASH_SUBJECT(broken_stack, "mine.broken-stack", "BROKEN: the stack, publishing nodes never written back", true,
                    Stack<true>);
