// corpus.bitmap-heap and its broken twins: a heap of one-line objects whose allocation state is one
// bitmap word, and a table of eight roots that name the live objects by offset.
//
// Protocol. Allocate-and-link (the operation's root is empty): take the lowest clear bit, write that
// object and write it back, set the bit with one atomic store and persist both, then name the object from
// the root with one atomic store and persist it. Unlink-and-free (the root names an object): clear the
// root, persist; clear the bit with one atomic store, not persisted on its own. A crash between the steps
// of either leaves an object allocated that no root names, and recovery reclaims every such object
// (clears its bit, durably) before anything allocates again; so the cleared bit may wait for the next
// fence. After recovery the allocator's invariant is exact: the set bits are the objects the roots name,
// each named once.
//
// Twins:
//  - link-before-bit: allocation names the object from its root before it sets the bit. A crash in
//    between leaves a reachable object the bitmap calls free, which the next allocation hands out again:
//    a double allocation from allocator metadata persisted out of order (persistence ordering [Witcher];
//    allocator consistency [Makalu]).
//  - leak: recovery trusts the bitmap and reclaims nothing. A crash between setting the bit and linking
//    leaves an object allocated that nothing names, for the life of the heap (a persistent leak [Makalu]).
// Both are caught in every granularity under both domains: the stores are atomic and fenced apart.
#include <array>
#include <bit>
#include <cstddef>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

enum class Bug { none, link_before_bit, leak };

constexpr uint64_t kRoots = 8;
constexpr uint64_t kObjects = 16;  // live objects never outnumber the roots

struct alignas(64) Object {
  uint64_t root;  // the root that names it
  uint64_t seq;   // the operation that allocated it
  uint64_t payload[5];
  uint64_t check;
};
struct alignas(64) Roots {
  uint64_t slot[kRoots];  // offset of the object, 0 when empty
};
// Bit i: objects[i] is allocated. The lowest free object is taken and no more than kRoots are allocated at
// once, so every bit a store sets or clears lies in the word's low half: made as two 4-byte halves, a store
// leaves the old word or the new one, never a torn one, and no stream can change that (the split mutants of
// the bitmap's stores are equivalent by design).
struct alignas(64) Bitmap {
  uint64_t bits;
  uint64_t pad[7];
};
struct Heap {
  Roots roots;
  Bitmap bitmap;
  Object objects[kObjects];
};
constexpr uint64_t kFirstObject = offsetof(Heap, objects);

using Picture = std::array<uint64_t, kRoots>;  // per root: 1 + the operation whose object it names, or 0

class BitmapHeap final : public FixedLayoutDesign<Bug, Heap> {
 public:
  using FixedLayoutDesign::FixedLayoutDesign;

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Heap* h = layout(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      const uint64_t r = root_of(i);
      uint64_t& root = h->roots.slot[r];
      if (root == 0) {
        ops.begin(i, "allocate an object for root " + std::to_string(r));
        const uint64_t index = static_cast<uint64_t>(std::countr_one(h->bitmap.bits));
        Object& obj = h->objects[index];
        write_object(obj, r, i);
        p.flush(&obj, sizeof obj);  // durable with the bit, before the link
        if (variant_ == Bug::link_before_bit) link(p, root, offset_of(image, &obj));
        p.store8(&h->bitmap.bits, h->bitmap.bits | (uint64_t{1} << index));  // one low bit: cannot tear
        p.persist(&h->bitmap.bits, 8);
        if (variant_ != Bug::link_before_bit) link(p, root, offset_of(image, &obj));
      } else {
        ops.begin(i, "free the object of root " + std::to_string(r));
        const uint64_t index = (root - kFirstObject) / sizeof(Object);
        link(p, root, 0);
        // One low bit, so it cannot tear; recovery reclaims the object if the store is lost.
        p.store8(&h->bitmap.bits, h->bitmap.bits & ~(uint64_t{1} << index));
      }
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    Heap* h = layout(image);
    for (uint64_t r = 0; r < kRoots; ++r) {
      const uint64_t off = h->roots.slot[r];
      if (off == 0) continue;
      named_objects_[r] = element_at<Object>(image, off, kFirstObject, kObjects);
      if (named_objects_[r] == nullptr)
        return broken("root " + std::to_string(r) + " names offset " + std::to_string(off) + ", no object");
      const uint64_t bit = uint64_t{1} << ((off - kFirstObject) / sizeof(Object));
      if (named_bits_ & bit) return broken("two roots name the object at offset " + std::to_string(off));
      named_bits_ |= bit;
    }
    // Reclaim what no root names: allocations and frees a crash cut in two.
    if (variant_ != Bug::leak && (h->bitmap.bits & ~named_bits_) != 0) {
      p.store8(&h->bitmap.bits, h->bitmap.bits & named_bits_);  // low bits only: cannot tear (see Bitmap)
      p.persist(&h->bitmap.bits, 8);
    }
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t bits = layout(image)->bitmap.bits;
    if ((named_bits_ & ~bits) != 0)
      return broken("object " + std::to_string(std::countr_zero(named_bits_ & ~bits)) +
                    " is named by a root but free in the bitmap: the next allocation hands it out again");
    if ((bits & ~named_bits_) != 0)
      return broken("object " + std::to_string(std::countr_zero(bits & ~named_bits_)) +
                    " is allocated but no root names it: leaked");
    Picture found{};
    for (uint64_t r = 0; r < kRoots; ++r) {
      const Object* obj = named_objects_[r];
      if (obj == nullptr) continue;
      if (!intact(*obj, r))
        return broken("root " + std::to_string(r) + " names an object whose contents did not persist");
      found[r] = obj->seq + 1;
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the objects the roots name");
  }

 private:
  uint64_t root_of(uint64_t op) const { return payload_word(seed_, op, 7) % kRoots; }

  static void link(const persist::Persister& p, uint64_t& root, uint64_t value) {
    p.store8(&root, value);
    p.persist(&root, 8);
  }

  void write_object(Object& obj, uint64_t root, uint64_t op) const {
    obj.root = root;
    obj.seq = op;
    fill_payload(obj.payload, 5, op);
    obj.check = checksum_words(&obj.root, 7);
  }

  bool intact(const Object& obj, uint64_t root) const {
    return obj.root == root && obj.seq < ops_ && obj.check == checksum_words(&obj.root, 7) &&
           payload_is(obj.payload, 5, obj.seq);
  }

  // The roots once the first `ops` operations returned.
  Picture after(uint64_t ops) const {
    return replay(ops, Picture{}, [this](Picture& roots, uint64_t i) {
      uint64_t& root = roots[root_of(i)];
      root = root == 0 ? i + 1 : 0;
    });
  }

  // What recover() found: the object each root names (null for an empty root), and a bit per named object.
  std::array<const Object*, kRoots> named_objects_{};
  uint64_t named_bits_ = 0;
};

const CorpusDesign<BitmapHeap, Bug> registered{"bitmap-heap", {Bug::link_before_bit, Bug::leak}};

}  // namespace
}  // namespace pmlab::crash::corpus
