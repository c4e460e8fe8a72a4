// The ds family's persistence policy on a PTM (ds/common/access.hpp): the ds structures (ds/bptree,
// ds/hashtable, …) run unchanged inside the transactions of any PTM (undo, redo, PMDK), and the ptm
// suite's B+-tree and hash map workloads are those structures.
//
// Every load is tx.read and every store tx.write — also a structure's plain stores of words not reachable
// yet or never made durable: on the redo PTM a word written earlier in the transaction exists only in its
// write set, so a store or load around it would be lost or stale. Blocks come from tx.alloc / tx.free (a
// removed node is reused, as the PTM's allocator is transactional). The structure's ordering points —
// flush, persist, fence, will_overwrite — are nothing: the PTM's commit makes the whole operation durable
// and failure-atomic, the B+-tree's index included, which therefore survives a crash consistent with the
// leaves (kDeclaredVolatileSurvives) and is not rebuilt.
//
// The arena's header — the structure's magic and its root words — is a block of the PTM heap whose offset
// is in one of the PTM's roots, so structures and other workloads share a heap through distinct roots.
// An arena serves, on each thread, the transaction a Binding attaches there: threads share a structure and
// run their transactions on it concurrently (the redo PTM), or by turns (the global lock of undo and PMDK).
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/ptm/common/ptm.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <Transaction Tx>
class TxArena : public ds::Offsets {
 public:
  // pmlab's heap hands out payloads 8 bytes into a 16-byte grain (PMDK's are aligned further).
  static constexpr uint64_t kAlign = 8;
  static constexpr bool kReusesBlocks = true;  // tx.free returns the block to the PTM's heap
  static constexpr bool kDeclaredVolatileSurvives = true;
  // A read may end a doomed attempt of a concurrent PTM by throwing (ptm::Abandoned), which its run() catches.
  static constexpr bool kNothrow = false;

  // `base`: where the PTM maps offset 0; `root`: the PTM root that holds the header's offset; `limit`:
  // the bytes from base a block may reach (the PTM's heap or pool).
  TxArena(std::byte* base, int root, uint64_t limit) noexcept : Offsets(base), root_(root), limit_(limit) {}
  // The header's offset held in the word at offset `link` instead (a block that describes the structure).
  struct Link {
    uint64_t offset;
  };
  TxArena(std::byte* base, Link link, uint64_t limit) noexcept : Offsets(base), link_(link.offset), limit_(limit) {}
  TxArena(const TxArena&) = delete;
  TxArena& operator=(const TxArena&) = delete;

  // Attaches the running transaction to the arena for the scope.
  class Binding {
   public:
    Binding(TxArena&, Tx& tx) noexcept : previous_(bound_) { bound_ = &tx; }
    ~Binding() { bound_ = previous_; }
    Binding(const Binding&) = delete;
    Binding& operator=(const Binding&) = delete;

   private:
    Tx* previous_;
  };

  // The PTM's transaction is the operation's scope.
  ds::NoScope operation() const noexcept { return {}; }

  Status format(uint64_t magic) {
    const uint64_t off = tx().alloc(kHeaderBytes);
    if (off == 0) return error(Errc::no_space, "no room in the PTM heap for the structure's header");
    header_ = off;
    store(header(), magic);
    for (int i = 0; i < ds::kRootWords; ++i) store(root(i), 0);
    tx().write(link(), off);
    return Status::success();
  }
  Status open(uint64_t magic) {
    const uint64_t off = tx().read(link());
    if (off == 0 || off % kAlign != 0 || !contains(off, kHeaderBytes))
      return error(Errc::corrupted, root_ >= 0 ? "PTM root " + std::to_string(root_) + " holds no structure header"
                                               : "the structure's descriptor links to no header");
    header_ = off;
    if (load(header()) != magic) return error(Errc::corrupted, "the structure's magic does not match");
    return Status::success();
  }

  uint64_t alloc(size_t bytes) {
    const uint64_t off = tx().alloc(bytes);
    assert(off % kAlign == 0);
    return off;
  }
  void free(uint64_t off, size_t) { tx().free(off); }

  uint64_t* root(int i) const noexcept { return header() + 1 + i; }
  bool contains(uint64_t off, size_t len) const noexcept { return off != 0 && off <= limit_ && len <= limit_ - off; }
  // No bump offset: any byte up to the limit may belong to a block.
  uint64_t used() const noexcept { return limit_; }

  uint64_t load(const uint64_t* word) const { return tx().read(word); }
  uint64_t load8(const uint64_t* word) const { return tx().read(word); }
  void store(uint64_t* word, uint64_t value) const { tx().write(word, value); }
  void store8(uint64_t* word, uint64_t value) const { tx().write(word, value); }

  // Byte ranges go word by word (the memory's side is 8-byte aligned); a last partial word keeps its
  // other bytes.
  void write_bytes(void* dst, const void* src, size_t len) const {
    auto* d = static_cast<uint64_t*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    for (; len >= 8; len -= 8, s += 8, ++d) {
      uint64_t w;
      std::memcpy(&w, s, 8);
      tx().write(d, w);
    }
    if (len > 0) {
      uint64_t w = tx().read(d);
      std::memcpy(&w, s, len);
      tx().write(d, w);
    }
  }
  void read_bytes(void* dst, const void* src, size_t len) const {
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const uint64_t*>(src);
    for (; len >= 8; len -= 8, d += 8, ++s) {
      const uint64_t w = tx().read(s);
      std::memcpy(d, &w, 8);
    }
    if (len > 0) {
      const uint64_t w = tx().read(s);
      std::memcpy(d, &w, len);
    }
  }
  void copy(void* dst, const void* src, size_t len) const {
    const auto* s = static_cast<const uint64_t*>(src);
    auto* d = static_cast<uint64_t*>(dst);
    for (; len >= 8; len -= 8, ++s, ++d) tx().write(d, tx().read(s));
    if (len > 0) {
      const uint64_t last = tx().read(s);
      write_bytes(d, &last, len);
    }
  }
  void zero(void* dst, size_t len) const {
    auto* d = static_cast<uint64_t*>(dst);
    for (; len >= 8; len -= 8, ++d) tx().write(d, 0);
    if (len > 0) {
      const uint64_t none = 0;
      write_bytes(d, &none, len);
    }
  }

  void flush(const void*, size_t) const noexcept {}
  void persist(const void*, size_t) const noexcept {}
  void fence() const noexcept {}
  void declare_volatile(const void*, size_t) const noexcept {}
  void will_overwrite(const void*, size_t) const noexcept {}

 private:
  static constexpr uint64_t kHeaderBytes = 8 * (1 + ds::kRootWords);  // [magic][root words]

  Tx& tx() const noexcept {
    assert(bound_ != nullptr && "a TxArena is used outside a transaction bound to it");
    return *bound_;
  }
  uint64_t* header() const noexcept { return at<uint64_t>(header_); }
  uint64_t* link() const noexcept { return root_ >= 0 ? tx().root(root_) : at<uint64_t>(link_); }

  int root_ = -1;
  uint64_t link_ = 0;
  uint64_t limit_;
  uint64_t header_ = 0;
  // The calling thread's transaction (one at a time per thread, whatever the arena).
  static inline thread_local Tx* bound_ = nullptr;
};

// A ds structure of 8-byte values (the ptm workloads' records) for `capacity` keys.
inline ds::Options word_values(uint64_t capacity) noexcept {
  ds::Options o;
  o.value_bytes = 8;
  o.capacity = capacity;
  return o;
}

// A ds structure in a PTM's heap: its TxArena (the header's offset in PTM root `root`) and the structure
// over it, made once and then used in transactions, each of which binds the arena to itself.
template <Ptm P, template <class> class S>
class PtmStructure {
 public:
  using Arena = TxArena<typename P::Tx>;
  static_assert(ds::PersistencePolicy<Arena>);
  using Structure = S<Arena>;

  PtmStructure(P& ptm, int root, const ds::Options& o)
      : arena_(base_of(ptm), root, limit_of(ptm)), structure_(arena_, o) {}

  // Runs body(structure) as one transaction of `ptm` on log slot `slot`.
  template <class F>
  void run(P& ptm, int slot, F&& body) {
    ptm.run(slot, [&](typename P::Tx& tx) {
      const typename Arena::Binding bound(arena_, tx);
      body(structure_);
    });
  }
  // An empty structure for `capacity` records.
  Status create(P& ptm, uint64_t capacity) {
    Status st;
    run(ptm, 0, [&](Structure& s) { st = s.create(capacity); });
    return st;
  }
  // The structure after the PTM's own recovery: its header found and its invariants checked.
  Status recover(P& ptm) {
    Status st;
    run(ptm, 0, [&](Structure& s) { st = s.recover(); });
    return st;
  }

 private:
  static std::byte* base_of(P& ptm) {
    std::byte* base = nullptr;
    ptm.run(0, [&](typename P::Tx& tx) { base = tx.template at<std::byte>(0); });
    return base;
  }
  // pmlab's PTMs: their heap; PMDK: its pool file (its offsets count from the pool's base).
  static uint64_t limit_of(P& ptm) {
    if constexpr (requires { ptm.heap().size(); }) {
      return ptm.heap().size();
    } else {
      std::error_code ec;
      const uint64_t bytes = std::filesystem::file_size(ptm.path(), ec);
      return ec ? UINT64_MAX : bytes;
    }
  }

  Arena arena_;
  Structure structure_;
};

// What the B+-tree and hash map workloads share: a ds structure of 8-byte values on the PTM, sized for a
// key space of twice the loaded keys, loaded in batched transactions.
template <Ptm P, template <class> class S>
class StructureWorkload {
 protected:
  using Bound = PtmStructure<P, S>;
  using Structure = typename Bound::Structure;
  static ds::Options options(const Config& c) { return word_values(2 * c.records); }

 public:
  // Records a run loads (config.records), in a full sweep and in a quick one.
  static constexpr uint64_t kRecords = 1 << 17, kQuickRecords = 1 << 14;
  // The ds arena's bound for every key of the key space present (its blocks are no smaller than the PTM
  // heap's), and room for the heap's own bookkeeping.
  static uint64_t heap_bytes(const Config& c) { return Structure::bytes_needed(options(c)) + (1 << 20); }

 protected:
  // Creates the structure (its header in PTM root `root`, create() given `capacity`) and inserts key_of(i),
  // valued key_of(i), for each i < c.records, `batch` per transaction.
  template <class KeyOf>
  Status load_keys(P& ptm, const Config& c, int root, uint64_t capacity, int batch, KeyOf&& key_of, const char* name) {
    keys_ = 2 * c.records;
    lookup_pct_ = c.lookup_pct;
    s_.emplace(ptm, root, options(c));
    PMLAB_TRY(s_->create(ptm, capacity));
    bool ok = true;
    for (uint64_t i = 0; i < c.records && ok;) {
      s_->run(ptm, 0, [&](Structure& s) {
        for (int b = 0; b < batch && i < c.records && ok; ++b, ++i) {
          const uint64_t k = key_of(i);
          ok = s.insert(k, 0, word_bytes(k));
        }
      });
    }
    if (!ok) return error(Errc::no_space, std::string(name) + ": heap too small");
    return Status::success();
  }

  // The structure's own invariants, and no more keys than the key space holds.
  Status check_structure(Structure& s, const char* name) const {
    PMLAB_TRY(s.check());
    if (s.count() > keys_)
      return error(Errc::corrupted, std::string(name) + ": " + std::to_string(s.count()) +
                                        " keys from a key space of " + std::to_string(keys_));
    return Status::success();
  }

  std::optional<Bound> s_;
  uint64_t keys_ = 0;
  int lookup_pct_ = 50;
};

}  // namespace pmlab::ptm::workloads
