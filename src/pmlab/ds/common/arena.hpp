// The memory a structure lives in, in the ds modes (the persistence policy of ds/common/access.hpp for
// every mode policy): one region addressed by offsets (never pointers, so a persistent structure survives
// being mapped at another address), a bump allocator, plain loads and stores, and the persistence calls of
// the mode policy (which compile to nothing in the volatile modes).
//
// Layout: a 64-byte header at offset 0 (magic, bump offset, root words the structure owns), then
// 64-byte aligned blocks. The bump word is written back before any block it covers is linked, so after a
// crash it is never below a reachable block; blocks allocated but never linked are leaked, and so are
// blocks a structure frees (no reuse, no garbage collection: the bench's workloads never delete, and a
// crash loses at most one in-flight block per thread).
//
// In the transactional mode the arena lies inside a libpmemobj pool (pmdk/obj_pool.hpp) and its
// persistence calls become the transaction's hooks (pmdk/tx.hpp): operation() brackets one
// structure operation in a transaction, store8 undo-logs the word it overwrites, flush / persist register
// fresh bytes for the commit's flush, fence waits for the commit. An allocation is not rolled back by an
// abort (its block leaks, as after a crash in the persist mode): the bump word is shared by all threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/mode.hpp"
#include "pmlab/pmdk/tx.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::ds {

inline constexpr uint64_t kBlockAlign = 64;
// The bytes a block of `bytes` takes in the arena.
constexpr uint64_t block_bytes(uint64_t bytes) noexcept { return (bytes + kBlockAlign - 1) & ~(kBlockAlign - 1); }

struct alignas(64) ArenaHeader {
  uint64_t magic;
  uint64_t bump;  // next free offset
  uint64_t root[kRootWords];
};
static_assert(sizeof(ArenaHeader) == 64);

template <ModePolicy M>
class Arena : public Offsets {
 public:
  static constexpr uint64_t kAlign = kBlockAlign;
  static constexpr bool kReusesBlocks = false;  // free() keeps the block (below)
  // The volatile bytes (a B+-tree's index) are plain stores no mode makes durable: recovery rebuilds them.
  static constexpr bool kDeclaredVolatileSurvives = false;
  static constexpr bool kNothrow = true;

  // `obj_pool`: the PMEMobjpool holding the region (transactional mode only).
  Arena(std::byte* base, size_t size, const persist::Persister& persister, void* obj_pool = nullptr) noexcept
      : Offsets(base), size_(size & ~(kBlockAlign - 1)), persister_(&persister), obj_pool_(obj_pool) {}

  // One failure-atomic structure operation (a transaction in the transactional mode, nothing otherwise).
  // Take it after the operation's locks, so the commit happens before they are released.
  auto operation() const noexcept {
    if constexpr (M::kTransactional) return pmdk::tx::Scope(obj_pool_);
    else return NoScope{};
  }

  // Lays out an empty arena for a structure identified by `magic`.
  Status format(uint64_t magic) {
    if (size_ < 2 * kBlockAlign)
      return error(Errc::no_space, "arena of " + std::to_string(size_) + " bytes is too small");
    if (reinterpret_cast<uintptr_t>(base_) % kBlockAlign != 0)
      return error(Errc::invalid_argument, "arena base is not 64-byte aligned");
    ArenaHeader& h = header();
    h = ArenaHeader{};
    h.magic = magic;
    h.bump = sizeof(ArenaHeader);
    persist(&h, sizeof h);
    return Status::success();
  }
  // Checks an existing arena: the structure's magic and a bump offset inside the region.
  Status open(uint64_t magic) const {
    const ArenaHeader& h = header();
    if (h.magic != magic) return error(Errc::corrupted, "arena magic does not match the structure");
    if (h.bump < sizeof(ArenaHeader) || h.bump > size_ || h.bump % kBlockAlign != 0)
      return error(Errc::corrupted, "arena bump offset " + std::to_string(h.bump) + " outside the region");
    return Status::success();
  }

  // A zeroed-or-stale block of `bytes` (rounded to 64), or 0 when the arena is full. Thread-safe. In the
  // durable mode the bump word is flushed; the caller's next fence makes it durable before any link.
  uint64_t alloc(size_t bytes) noexcept {
    const uint64_t rounded = block_bytes(bytes);
    const persist::PmWord bump = persister_->word(&header().bump);
    uint64_t off = bump.load(std::memory_order_relaxed);
    do {
      if (off + rounded > size_) return 0;
    } while (!bump.compare_exchange_strong(off, off + rounded, std::memory_order_relaxed));
    flush(&header().bump, 8);
    return off;
  }
  // A bump arena never reuses a block: a freed one stays allocated, unreachable.
  void free(uint64_t, size_t) const noexcept {}

  // Written so that no sum wraps: recovery asks it about offsets read from a possibly damaged image.
  bool contains(uint64_t off, size_t len) const noexcept {
    const uint64_t bump = header().bump;
    return off >= sizeof(ArenaHeader) && off <= bump && len <= bump - off;
  }

  uint64_t* root(int i) const noexcept { return &header().root[i]; }
  uint64_t used() const noexcept { return header().bump; }
  // Whether `bytes` more (whole blocks) fit now: for one allocating thread, that its next allocations
  // of that many bytes succeed.
  bool has_room(uint64_t bytes) const noexcept { return used() + bytes <= size_; }
  size_t size() const noexcept { return size_; }

  void flush(const void* p, size_t len,
             const std::source_location where = std::source_location::current()) const noexcept {
    if constexpr (M::kTransactional)
      if (pmdk::tx::add_fresh(p, len)) return;
    if constexpr (M::kDurable) persister_->flush(p, len, where);
  }
  void fence(const std::source_location where = std::source_location::current()) const noexcept {
    if constexpr (M::kTransactional)
      if (pmdk::tx::in_transaction()) return;
    if constexpr (M::kDurable) persister_->fence(where);
  }
  void persist(const void* p, size_t len,
               const std::source_location where = std::source_location::current()) const noexcept {
    if constexpr (M::kTransactional)
      if (pmdk::tx::add_fresh(p, len)) return;
    if constexpr (M::kDurable) persister_->persist(p, len, where);
  }
  // Bytes the structure never makes durable and rebuilds after a crash (see Persister::declare_volatile).
  void declare_volatile(const void* p, size_t len) const noexcept {
    if constexpr (M::kDurable) persister_->declare_volatile(p, len);
  }
  // Bytes about to change that may have been reachable when the operation began although they are not
  // now (a B+-tree slot freed by a split earlier in the same operation): the transactional mode undo-logs
  // them first, since its flush registrations assume bytes unreachable at the start of the transaction.
  void will_overwrite(const void* p, size_t len) const noexcept {
    if constexpr (M::kTransactional) pmdk::tx::snapshot(p, len);
  }
  // The commit store: atomic in every mode (concurrent readers may see it), durable only after persist.
  // Transactional: the word is undo-logged first.
  void store8(uint64_t* word, uint64_t value,
              const std::source_location where = std::source_location::current()) const noexcept {
    if constexpr (M::kTransactional) pmdk::tx::snapshot(word, 8);
    persister_->store8(word, value, where);
  }
  uint64_t load8(const uint64_t* word) const noexcept { return persist::Persister::load8(word); }
  uint64_t load(const uint64_t* word) const noexcept { return *word; }
  void store(uint64_t* word, uint64_t value) const noexcept { *word = value; }
  void write_bytes(void* dst, const void* src, size_t len) const noexcept { std::memcpy(dst, src, len); }
  void read_bytes(void* dst, const void* src, size_t len) const noexcept { std::memcpy(dst, src, len); }
  void copy(void* dst, const void* src, size_t len) const noexcept { std::memcpy(dst, src, len); }
  void zero(void* dst, size_t len) const noexcept { std::memset(dst, 0, len); }

 private:
  ArenaHeader& header() const noexcept { return *reinterpret_cast<ArenaHeader*>(base_); }

  size_t size_;
  const persist::Persister* persister_;
  void* obj_pool_;
};

static_assert(PersistencePolicy<Arena<Volatile>> && PersistencePolicy<Arena<Durable>> &&
              PersistencePolicy<Arena<Transactional>>);

}  // namespace pmlab::ds
