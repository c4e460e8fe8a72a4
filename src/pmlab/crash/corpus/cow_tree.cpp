// corpus.cow-tree and its broken twin: a two-level copy-on-write tree. A root node of eight child links
// (the image's last line) names eight leaves of four values; each leaf carries a parent link (the root's
// offset) and its slot in the parent. Leaves are
// never changed in place: an update copies the leaf into a fresh node with the new value and swaps the
// root's link.
//
// Protocol. Copy the leaf, change one value, set its parent link and slot, stamp its version and checksum,
// persist the copy; then swap the root's link to it with one atomic store and persist it. The old leaf is
// garbage (never reused here). Recovery follows each link and checks the leaf it finds: a whole leaf,
// whose parent link and slot name the link that reached it.
//
// Twin:
//  - publish-before-flush: swaps the link and persists it before persisting the copy. A crash in between
//    publishes a leaf whose contents are still in the cache: a missing flush before publication, the
//    most common bug of the studies [Agamotto] (persistence ordering [Witcher]). Under eADR the link's
//    fence persists the copy as well, so the twin claims ADR only; caught in line mode.
#include <array>
#include <cstddef>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kLeaves = 8, kValues = 4;

struct alignas(64) Root {
  uint64_t child[kLeaves];  // offset of each leaf
};
struct alignas(64) Leaf {
  uint64_t parent;   // offset of the node that links it
  uint64_t slot;     // which of its parent's links
  uint64_t version;  // 1 + the update that made it; 0 for the leaves format made
  uint64_t value[kValues];
  uint64_t check;
};

using Values = std::array<uint64_t, kLeaves * kValues>;

enum class Bug { none, publish_before_flush };

class CowTree final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return pool() * sizeof(Leaf) + sizeof(Root); }

  void format(Image image, const persist::Persister& p) override {
    Root* root = root_of(image);
    const Values initial = after(0);
    for (uint64_t j = 0; j < kLeaves; ++j) {
      Leaf& leaf = leaf_at(image, j);
      fill(leaf, offset_of(image, root), j, 0, &initial[j * kValues]);
      root->child[j] = offset_of(image, &leaf);
    }
    p.persist(image.base, image.size);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Root* root = root_of(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      const uint64_t key = key_of(i), j = key / kValues;
      ops.begin(i, "update key " + std::to_string(key));
      const Leaf& old = *element_at<Leaf>(image, root->child[j], 0, pool());
      Leaf& copy = leaf_at(image, kLeaves + i);
      uint64_t values[kValues];
      for (uint64_t k = 0; k < kValues; ++k) values[k] = old.value[k];
      values[key % kValues] = value_of(i);
      fill(copy, offset_of(image, root), j, i + 1, values);
      if (variant_ == Bug::none) p.persist(&copy, sizeof copy);
      p.store8(&root->child[j], offset_of(image, &copy));
      p.persist(&root->child[j], 8);
      if (variant_ == Bug::publish_before_flush) p.persist(&copy, sizeof copy);
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the root's links are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Root* root = root_of(image);
    Values found{};
    for (uint64_t j = 0; j < kLeaves; ++j) {
      const Leaf* leaf = element_at<Leaf>(image, root->child[j], 0, pool());
      if (leaf == nullptr) return broken("the root's link " + std::to_string(j) + " names no leaf");
      if (leaf->check != checksum_words(&leaf->parent, 7) || leaf->version > ops_)
        return broken("the leaf under link " + std::to_string(j) + " did not persist");
      if (leaf->parent != offset_of(image, root) || leaf->slot != j)
        return broken("the leaf under link " + std::to_string(j) + " names another parent link");
      for (uint64_t k = 0; k < kValues; ++k) found[j * kValues + k] = leaf->value[k];
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the tree's values");
  }

 private:
  uint64_t pool() const { return kLeaves + ops_; }
  static Leaf& leaf_at(Image image, uint64_t n) { return reinterpret_cast<Leaf*>(image.base)[n]; }
  static Root* root_of(Image image) { return reinterpret_cast<Root*>(image.base + image.size - sizeof(Root)); }

  uint64_t key_of(uint64_t op) const { return payload_word(seed_, op, 3) % (kLeaves * kValues); }
  uint64_t value_of(uint64_t op) const { return payload_word(seed_, op, 0); }

  static void fill(Leaf& leaf, uint64_t parent, uint64_t slot, uint64_t version, const uint64_t* values) {
    leaf.parent = parent;
    leaf.slot = slot;
    leaf.version = version;
    for (uint64_t k = 0; k < kValues; ++k) leaf.value[k] = values[k];
    leaf.check = checksum_words(&leaf.parent, 7);
  }

  Values after(uint64_t ops) const {
    Values v;
    for (uint64_t k = 0; k < v.size(); ++k) v[k] = k + 1;
    return replay(ops, v, [this](Values& values, uint64_t i) { values[key_of(i)] = value_of(i); });
  }
};

const CorpusDesign<CowTree, Bug> registered{"cow-tree", {Bug::publish_before_flush}};

}  // namespace
}  // namespace pmlab::crash::corpus
