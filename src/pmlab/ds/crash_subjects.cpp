// The crash subjects of the persistent structures: ds.<structure>.persist. Each runs a stream of inserts
// of new keys and updates of earlier ones — and, for a structure that deletes, removes of earlier ones —
// (values that span cache lines, B+-tree leaves of 4 slots so splits happen), and after every simulated
// crash checks, with the structure's own recovery, its invariants and the durability contract against a
// model of the stream: every returned operation is there with its value (a removed key is gone), nothing
// later is, and the operation in flight is wholly there or wholly absent.
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmlab/common/hash.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"
#include "pmlab/workload/random.hpp"

namespace pmlab::ds {
namespace {

// Two cache lines at most offsets (a torn value is visible), and slots of 176 bytes in the array, so some
// keys sit 48 bytes into a line and their value buffer starts on the next: the key needs its own flush.
constexpr uint32_t kValueBytes = 80;

struct StreamOp {
  enum class Kind : uint8_t { insert, update, remove } kind;
  uint64_t record;
  uint64_t key;
  uint64_t version;  // the value written is value_for(key, version)
};

const char* name_of(StreamOp::Kind k) {
  return k == StreamOp::Kind::insert ? "insert" : k == StreamOp::Kind::update ? "update" : "remove";
}

void value_for(uint64_t key, uint64_t version, std::byte* out) {
  uint64_t s = key * 0x100000001b3ULL + version;
  for (uint32_t i = 0; i < kValueBytes; i += 8) {
    const uint64_t w = splitmix64(s);
    std::memcpy(out + i, &w, 8);
  }
}

template <template <class> class S>
requires Structure<S<Arena<Durable>>>
class StructureSubject final : public crash::Subject {
  using Tree = S<Arena<Durable>>;
  using Kind = StreamOp::Kind;

 public:
  explicit StructureSubject(const crash::SubjectOptions& o) {
    options_.value_bytes = kValueBytes;
    options_.capacity = o.ops + 1;
    options_.leaf_slots = 4;
    workload::Random rng(o.seed * 7919 + 17);
    std::vector<uint64_t> live;  // records present: the ones an update or remove may pick
    uint64_t inserted = 0;
    for (uint64_t i = 0; i < o.ops; ++i) {
      StreamOp op{};
      if (live.size() < 3 || rng.next_below(3) != 0) {
        op.kind = Kind::insert;
        op.record = inserted++;
        live.push_back(op.record);
      } else {
        const uint64_t at = rng.next_below(live.size());
        op.record = live[at];
        op.kind = Removable<Tree> && rng.next_below(2) == 0 ? Kind::remove : Kind::update;
        if (op.kind == Kind::remove) {
          live[at] = live.back();
          live.pop_back();
        }
      }
      op.key = fnv1a64_word(op.record ^ (o.seed << 32));
      op.version = i + 1;
      stream_.push_back(op);
    }
  }

  size_t image_bytes() const override { return Tree::bytes_needed(options_) + 16 * 1024; }

  void format(crash::Image image, const persist::Persister& p) override {
    Arena<Durable> arena(image.base, image.size, p);
    Tree tree(arena, options_);
    if (Status s = tree.create(options_.capacity); !s) throw std::runtime_error(s.message());
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    Arena<Durable> arena(image.base, image.size, p);
    Tree tree(arena, options_);
    for (uint64_t i = 0; i < stream_.size(); ++i) {
      const StreamOp& op = stream_[i];
      ops.begin(i, std::string(name_of(op.kind)) + " record " + std::to_string(op.record));
      const bool done = apply(tree, op);
      ops.end(i);
      if (!done) throw std::runtime_error(std::string(Tree::kName) + ": operation " + std::to_string(i) + " failed");
    }
  }

  // The structure's own recovery. It may rebuild DRAM state (the B+-tree's index and fingerprints), so the
  // recovered structure is kept for the check rather than recovered again. The B+-tree opens as pmlab::Tree
  // opens it, through reopen(), which keeps the index it finds only where that index still routes every key
  // (and else recovers): crash images test both.
  Status recover(crash::Image image, const persist::Persister& p) override {
    recovered_arena_.emplace(image.base, image.size, p);
    recovered_tree_.emplace(*recovered_arena_, options_);
    if constexpr (requires { recovered_tree_->reopen(); }) return recovered_tree_->reopen();
    else return recovered_tree_->recover();
  }

  Status check(crash::Image, const persist::Persister&, const crash::CrashPoint& at) override {
    Tree& tree = *recovered_tree_;
    PMLAB_TRY(tree.check());
    std::map<uint64_t, uint64_t> model;  // key -> version
    for (uint64_t i = 0; i < at.ops_completed && i < stream_.size(); ++i) {
      if (stream_[i].kind == Kind::remove) model.erase(stream_[i].key);
      else model[stream_[i].key] = stream_[i].version;
    }
    const StreamOp* flight =
        at.op_in_flight && at.ops_completed < stream_.size() ? &stream_[at.ops_completed] : nullptr;
    const bool removing = flight != nullptr && flight->kind == Kind::remove;

    std::byte got[kValueBytes], want[kValueBytes], alternative[kValueBytes];
    bool flight_present = false;  // the in-flight operation took effect
    for (const auto& [key, version] : model) {
      if (!tree.read(key, 0, got) && !read_by_record(tree, key, got)) {
        if (removing && flight->key == key) {
          flight_present = true;
          continue;
        }
        return error(Errc::failed,
                     "a key written by a returned operation is missing (version " + std::to_string(version) + ")");
      }
      value_for(key, version, want);
      if (std::memcmp(got, want, kValueBytes) == 0) continue;
      if (flight != nullptr && !removing && flight->key == key) {
        value_for(key, flight->version, alternative);
        if (std::memcmp(got, alternative, kValueBytes) == 0) {
          flight_present = true;
          continue;
        }
      }
      return error(Errc::failed, "a key holds neither its durable value nor the in-flight one (torn value?)");
    }
    uint64_t expected = model.size();
    if (removing && flight_present) --expected;
    if (flight != nullptr && !removing && !model.contains(flight->key)) {
      if (tree.read(flight->key, flight->record, got)) {
        value_for(flight->key, flight->version, want);
        if (std::memcmp(got, want, kValueBytes) != 0)
          return error(Errc::failed, "the in-flight insert is present with a torn value");
        flight_present = true;
        ++expected;
      }
    }
    if (tree.count() != expected)
      return error(Errc::failed, "holds " + std::to_string(tree.count()) + " records, the model " +
                                     std::to_string(expected) +
                                     (flight_present ? " (in-flight operation present)" : ""));
    return Status::success();
  }

 private:
  static bool apply(Tree& tree, const StreamOp& op) {
    std::byte value[kValueBytes];
    value_for(op.key, op.version, value);
    switch (op.kind) {
      case Kind::insert: return tree.insert(op.key, op.record, value);
      case Kind::update: return tree.update(op.key, op.record, value);
      case Kind::remove:
        if constexpr (Removable<Tree>) return tree.remove(op.key, op.record);
        break;
    }
    return false;
  }

  // The array is indexed by record number: find the record that owns the key.
  bool read_by_record(Tree& tree, uint64_t key, std::byte* out) {
    for (const StreamOp& op : stream_)
      if (op.key == key) return tree.read(key, op.record, out);
    return false;
  }

  Options options_;
  std::vector<StreamOp> stream_;
  // What recover() opened over the image; check() goes on with them (the tree refers to the arena).
  std::optional<Arena<Durable>> recovered_arena_;
  std::optional<Tree> recovered_tree_;
};

template <template <class> class S>
crash::SubjectInfo info(std::string description) {
  crash::SubjectInfo i;
  i.name = std::string("ds.") + S<Arena<Durable>>::kName + ".persist";
  i.description = std::move(description);
  i.make = [](const crash::SubjectOptions& o) { return std::make_unique<StructureSubject<S>>(o); };
  return i;
}

const crash::SubjectRegistration array_subject{
    info<Array>("array slots: key, then value buffer + selector flip (8-byte commit)")};
const crash::SubjectRegistration hashtable_subject{
    info<Hashtable>("chained hashtable: durable node, then 8-byte bucket-head commit; updates by selector flip, "
                    "removes by one 8-byte unlinking store")};
const crash::SubjectRegistration skiplist_subject{
    info<Skiplist>("skiplist: durable node, level-0 link commit, upper links as hints")};
const crash::SubjectRegistration bptree_subject{
    info<BPTree>("B+-tree with persistent leaves (bitmap + next link in one word), index and leaf fingerprints rebuilt "
                 "on recovery")};
const crash::SubjectRegistration list_subject{
    info<List>("linked list: durable node, then 8-byte head commit; updates by selector flip")};

}  // namespace
}  // namespace pmlab::ds
