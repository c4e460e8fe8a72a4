// corpus.dlist and its broken twins: a sorted, circular doubly-linked list of one-line nodes around a
// sentinel (offset 0), linked by offsets. Three operations in four insert a key; the fourth deletes the
// smallest.
//
// Protocol. The forward links are the commit, the backward links follow. An insert writes the node (both
// links set) and persists it, points its predecessor's next at it with one atomic store and persists that,
// then its successor's prev, likewise. A delete points the predecessor's next past the node, persists, then
// the successor's prev back at the predecessor, persists. A crash between the two leaves one stale prev
// link, so recovery walks the forward links and repairs every prev link that does not name the node
// before it, with plain stores (a repair a crash tears is made again), and makes the repairs durable before
// it returns.
//
// Twins:
//  - forward-only-repair: recovery checks the forward chain and repairs no prev link. A crash between the
//    two stores leaves a list that reads one way forward and another backward: recovery that reads the
//    half-updated state as consistent, a cross-failure semantic bug [XFDetector]. Caught in line mode
//    under both domains.
//  - unpersisted-repair: recovery repairs the prev links with plain stores and never writes them back.
//    Every check of the recovered list passes; a second crash just after recovery takes the repairs away.
//    No study names this class; it is the post-failure code's own durability (the post-failure view of
//    [XFDetector], applied to recovery's writes): caught only when recovery is crash-tested, at its end.
#include <utility>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

enum class Repair { durable, none, unpersisted };

struct alignas(64) Node {
  uint64_t next;  // offset; 0 is the sentinel
  uint64_t prev;
  uint64_t key;
  uint64_t seq;  // the insert that wrote it
  uint64_t payload[3];
  uint64_t check;  // over key, seq and payload
};

using Keys = std::vector<std::pair<uint64_t, uint64_t>>;  // (key, seq) in list order

class DList final : public Design<Repair> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return pool() * sizeof(Node); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Node& sentinel = node(image, 0);
    for (uint64_t i = 0; i < ops_; ++i) {
      if (erases(i, sentinel.next != 0)) {
        ops.begin(i, "delete the smallest key");
        const uint64_t gone = sentinel.next;
        const uint64_t succ = node(image, gone).next;
        link(p, sentinel.next, succ);
        link(p, node(image, succ).prev, 0);
      } else {
        ops.begin(i, "insert key " + std::to_string(key_of(i)));
        uint64_t pred = 0;
        while (node(image, pred).next != 0 && node(image, node(image, pred).next).key < key_of(i))
          pred = node(image, pred).next;
        const uint64_t succ = node(image, pred).next, offset = (1 + i) * sizeof(Node);
        Node& n = node(image, offset);
        n.next = succ;
        n.prev = pred;
        n.key = key_of(i);
        n.seq = i;
        fill_payload(n.payload, 3, i);
        n.check = checksum_words(&n.key, 5);
        p.persist(&n, sizeof n);
        link(p, node(image, pred).next, offset);
        link(p, node(image, succ).prev, offset);
      }
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    bool repaired = false;
    for (uint64_t a = 0;;) {
      if (forward_.size() > pool()) return broken("the forward links form a cycle");
      const uint64_t b = node(image, a).next;
      Node* nb = element_at<Node>(image, b, 0, pool());
      if (nb == nullptr) return broken("a next link names offset " + std::to_string(b) + ", no node");
      if (b != 0) {
        if (!intact(*nb)) return broken("a node reachable forward did not persist");
        if (!keys_found_.empty() && nb->key <= keys_found_.back().first)
          return broken("the forward links are out of key order");
      }
      if (nb->prev != a && variant_ != Repair::none) {
        if (variant_ == Repair::durable) {
          // A plain store: a prev link a crash tears is one the next recovery repairs again, whatever it
          // holds, as recovery rewrites every prev link from the forward chain: nothing needs the word whole.
          nb->prev = a;
          p.flush(&nb->prev, 8);
          repaired = true;
        } else {
          nb->prev = a;
        }
      }
      if (b == 0) break;
      forward_.push_back(b);
      keys_found_.emplace_back(nb->key, nb->seq);
      a = b;
    }
    if (repaired) p.fence();
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    std::vector<uint64_t> backward;
    for (uint64_t b = node(image, 0).prev; b != 0; b = node(image, b).prev) {
      if (backward.size() > forward_.size() || element_at<Node>(image, b, 0, pool()) == nullptr) break;
      backward.push_back(b);
    }
    if (std::vector<uint64_t>(forward_.rbegin(), forward_.rend()) != backward)
      return broken("the list reads " + std::to_string(forward_.size()) + " nodes forward but " +
                    std::to_string(backward.size()) + " (or others) backward");
    return durably_linearizable(
        keys_found_, at, [this](uint64_t k) { return after(k); }, "the list's keys");
  }

 private:
  uint64_t pool() const { return 1 + ops_; }
  static Node& node(Image image, uint64_t offset) { return *reinterpret_cast<Node*>(image.base + offset); }
  uint64_t key_of(uint64_t op) const { return payload_word(seed_, op, 4) >> 1; }
  static bool erases(uint64_t op, bool nonempty) { return op % 4 == 3 && nonempty; }

  static void link(const persist::Persister& p, uint64_t& word, uint64_t offset) {
    p.store8(&word, offset);
    p.persist(&word, 8);
  }

  bool intact(const Node& n) const {
    return n.seq < ops_ && n.key == key_of(n.seq) && n.check == checksum_words(&n.key, 5) &&
           payload_is(n.payload, 3, n.seq);
  }

  Keys after(uint64_t ops) const {
    return replay(ops, Keys{}, [this](Keys& list, uint64_t i) {
      if (erases(i, !list.empty())) {
        list.erase(list.begin());
      } else {
        auto at = list.begin();
        while (at != list.end() && at->first < key_of(i)) ++at;
        list.insert(at, {key_of(i), i});
      }
    });
  }

  // What recover() found following the forward links: the nodes' offsets and their keys, first to last.
  std::vector<uint64_t> forward_;
  Keys keys_found_;
};

const CorpusDesign<DList, Repair> registered{"dlist", {Repair::none, Repair::unpersisted}};

}  // namespace
}  // namespace pmlab::crash::corpus
