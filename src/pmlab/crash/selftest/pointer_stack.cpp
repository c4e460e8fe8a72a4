// selftest.offset-stack and its broken twins: a persistent stack of linked nodes. A push writes a node
// (its link to the old top inside it), persists it, then swings the top with one 8-byte store; a pop
// swings the top to the next node. The correct design links by offsets from the image's base. The broken
// ones link by absolute addresses, which name the run's mapping and mean nothing after a reboot: one
// otherwise correct, one that also forgets to flush the node, a real bug that an absolute pointer into
// still-live memory would hide.
#include <cstring>
#include <vector>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

enum class Links { offsets, absolute, absolute_unflushed };

struct alignas(64) Node {
  uint64_t next;  // offset or address of the node below; 0 at the bottom
  uint64_t seq;   // the operation that pushed it
  uint64_t payload[5];
  uint64_t check;
};
struct alignas(64) Head {
  uint64_t top;
  uint64_t pad[7];
};

class PointerStack final : public HeaderAndRecordsDesign<Links, Head, Node> {
 public:
  using HeaderAndRecordsDesign::HeaderAndRecordsDesign;

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Head* head = header(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      const bool pop = is_pop(i);
      ops.begin(i, (pop ? "pop, operation " : "push node ") + std::to_string(i));
      if (pop) {
        const Node* top = deref(image, head->top);
        if (top != nullptr) {
          p.store8(&head->top, top->next);
          p.persist(&head->top, 8);
        }
      } else {
        Node& n = record(image, i);
        n.next = head->top;
        n.seq = i;
        fill_payload(n.payload, 5, i);
        n.check = checksum_words(&n.next, 7);
        if (variant_ != Links::absolute_unflushed) p.persist(&n, sizeof n);
        p.store8(&head->top, ref(image, &n));
        p.persist(&head->top, 8);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the top word is the commit
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    std::vector<uint64_t> found;  // seqs from the top down
    const Head* head = header(image);
    for (const Node* n = deref(image, head->top); n != nullptr; n = deref(image, n->next)) {
      if (n->check != checksum_words(&n->next, 7) || n->seq >= ops_)
        return broken("a node reachable from the top did not persist (seq " + std::to_string(n->seq) + ")");
      if (found.size() > ops_) return broken("the stack's links form a cycle");
      found.push_back(n->seq);
    }
    const std::vector<uint64_t> before = model(at.ops_completed);
    if (found == before) return Status::success();
    if (at.op_in_flight && found == model(at.ops_completed + 1)) return Status::success();
    return broken("the stack holds " + std::to_string(found.size()) + " nodes, not the " +
                  std::to_string(before.size()) + " the returned operations left");
  }

 private:
  static bool is_pop(uint64_t op) { return op % 5 == 4; }

  // The stack after the first `ops` operations, top first.
  std::vector<uint64_t> model(uint64_t ops) const {
    const auto stack = replay(ops, std::vector<uint64_t>{}, [](std::vector<uint64_t>& s, uint64_t i) {
      if (!is_pop(i)) s.push_back(i);
      else if (!s.empty()) s.pop_back();
    });
    return {stack.rbegin(), stack.rend()};
  }

  uint64_t ref(Image image, const Node* n) const {
    if (variant_ == Links::offsets) return static_cast<uint64_t>(reinterpret_cast<const std::byte*>(n) - image.base);
    return reinterpret_cast<uint64_t>(n);
  }

  const Node* deref(Image image, uint64_t r) const {
    if (r == 0) return nullptr;
    if (variant_ != Links::offsets) return reinterpret_cast<const Node*>(r);  // trusted: that is the bug
    if (r < sizeof(Head) || r + sizeof(Node) > image.size || (r - sizeof(Head)) % sizeof(Node) != 0) return nullptr;
    return reinterpret_cast<const Node*>(image.base + r);
  }
};

const SelfTestDesign<PointerStack, Links> registered{"offset-stack", {Links::absolute, Links::absolute_unflushed}};

}  // namespace
}  // namespace pmlab::crash::selftest
