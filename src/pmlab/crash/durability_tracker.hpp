// The simulated durability domain: an Observer that keeps the durable image of a region, and what else
// a crash could leave of each cache line.
//
// ADR: a line reaches the durable image when it has been written back (flush or non-temporal store) and a
// fence follows; the content that reaches it is the line as it was when written back. eADR: everything
// stored before a fence is durable at the fence. Either way a line that changed since it was last durable
// may reach memory at any moment (eviction), with any content it held since: the tracker keeps each such
// line's history, one value per persistence call at which the line had changed (a call is the only moment
// it can look; a value stored and overwritten between two calls is never seen).
//
// It also learns how each byte changed: by the vocabulary's atomic stores (store8, PmWord: the word changes
// as one), its non-temporal stores (whole lines: every aligned 8-byte word changes as one), or plain stores
// between calls (nothing makes those atomic; the byte granularity lets them tear byte by byte).
//
// In a concurrent run (crash/interleaving.hpp) a fence orders only its own thread's write-backs: a line
// another thread wrote back stays pending until that thread fences. Under eADR a locked read-modify-write
// is a durability point like a fence (what it makes visible to other threads is in the caches, which are
// durable): another thread cannot see a value a crash could still take back.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/call_sites.hpp"
#include "pmlab/crash/interleaving.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/persist/observer.hpp"

namespace pmlab::crash {

// The smallest piece a crash can split. line: a cache line persists whole. word: aligned 8-byte words
// persist independently (x86's guarantee for aligned 8-byte stores). byte: like word, but bytes changed
// by plain stores persist independently (a compiler may split any plain store); only the vocabulary's
// atomic and non-temporal stores hold.
enum class Granularity : uint8_t { line, word, byte };
const char* to_string(Granularity g) noexcept;
Result<Granularity> parse_granularity(std::string_view text);

inline constexpr size_t kLineBytes = 64;
// Values a pending line keeps besides its durable content; older ones are dropped (counted).
inline constexpr size_t kMaxLineValues = 16;

using LineBytes = std::array<std::byte, kLineBytes>;

// A cache line a crash may leave other than durable.
struct PendingLine {
  size_t offset = 0;  // in the region
  size_t size = 0;    // 64, less at the region's end
  // The contents it held since it was last durable, other than the durable one, each once, oldest first.
  std::vector<LineBytes> values;
  int latest = -1;           // index of its content now in `values`, -1 when that is the durable content
  int written_back = -1;     // index of the content written back since the last fence, -1 when none
  uint64_t order = 0;        // when it first changed since it was last durable (write order)
  uint64_t plain_bytes = 0;  // bit i: byte i was changed by a plain store
};

// The pending line a line's history makes (shared by this tracker and exec mode's line model): the values
// it held other than `durable`, each once; when more than kMaxLineValues, the newest, keeping the
// written-back one (history[written_back], -1 for none); oldest first. Empty values when none differs.
PendingLine pending_line(size_t offset, size_t size, uint64_t order, uint64_t plain_bytes, const LineBytes& durable,
                         const LineBytes& now, const std::vector<LineBytes>& history, int written_back);

class DurabilityTracker final : public persist::Observer {
 public:
  // `on_crash_point` runs at every fence, before it takes effect.
  DurabilityTracker(Image working, persist::Domain domain,
                    std::function<void(const std::source_location&)> on_crash_point);

  // The working image as it is now becomes the durable image (after format, before tracking starts).
  void adopt_working_as_durable();
  // Where mutation testing's decisions and the call-site record come from (may be null).
  void set_call_sites(CallSites* sites) noexcept { sites_ = sites; }
  // The granularity the crash states are made at: whether a split store's bytes may tear.
  void set_granularity(Granularity granularity) noexcept { granularity_ = granularity; }
  // A concurrent run's threads: every event is a handover point (may be null).
  void set_interleaving(Interleaving* interleaving) noexcept { interleaving_ = interleaving; }

  void on_writeback(const void* addr, size_t len, persist::Writeback kind,
                    const std::source_location& where) noexcept override;
  void on_fence(const std::source_location& where) noexcept override;
  void on_wait() noexcept override {
    if (interleaving_ != nullptr) interleaving_->wait();
  }
  void before_store(const void* addr, size_t len, const std::source_location& where) noexcept override;
  void after_atomic_store(const void* addr, size_t size, const std::source_location& where) noexcept override;
  persist::Mutation mutation(persist::Call call, const void* addr, size_t len,
                             const std::source_location& where) noexcept override;
  void after_locked_rmw(const std::source_location& where) noexcept override;
  void on_volatile(const void* addr, size_t len) noexcept override;
  void after_split_store(const void* addr, uint64_t before, uint64_t after,
                         const std::source_location& where) noexcept override;

  // Records the region as it is now: call before pending() at a crash point that is not a fence.
  void capture() noexcept { capture(nullptr); }
  // At the end of what is tracked: records the region, and a dropped call not yet made up counts.
  void finish() noexcept {
    capture(nullptr);
    settle_dropped_effective();
  }
  // The lines a crash at this instant may leave other than durable, in address order.
  std::vector<PendingLine> pending() const;
  const std::vector<std::byte>& durable() const noexcept { return durable_; }
  uint64_t fences() const noexcept { return fences_; }
  uint64_t dropped_values() const noexcept { return dropped_values_; }

 private:
  // The vocabulary store that explains changed bytes: an atomic store, or non-temporal stores.
  struct Attribution {
    uintptr_t begin, end;
    bool non_temporal;
  };
  static constexpr std::array<int, Interleaving::kMaxThreads> none_written_back() {
    std::array<int, Interleaving::kMaxThreads> a{};
    a.fill(-1);
    return a;
  }
  struct LineState {
    std::vector<LineBytes> history;  // contents at calls since durable, each different from the one before
    // Per thread: the index in history of the content it wrote back since its last fence, -1 when none.
    std::array<int, Interleaving::kMaxThreads> written_back = none_written_back();
    uint64_t order = 0;
    uint64_t plain_bytes = 0;
    uint64_t volatile_bytes = 0;  // declared volatile: never explored (kept across resets)
    bool active = false;
  };

  void capture(const Attribution* attribution) noexcept;
  // A fence, or under eADR a locked read-modify-write: a crash point, then the thread's write-backs (eADR:
  // every store) durable.
  void durability_point(const std::source_location& where) noexcept;
  void commit(unsigned thread);
  void handover() {
    if (interleaving_ != nullptr) interleaving_->point();
  }
  // Settles a dropped call: its effect showed by now (or can no longer be ruled out), or it had none.
  void settle_dropped_effective() noexcept;
  void settle_dropped_inert(Inert reason) noexcept;
  void reset(LineState& line);

  Image working_;
  persist::Domain domain_;
  std::function<void(const std::source_location&)> on_crash_point_;
  CallSites* sites_ = nullptr;
  Granularity granularity_ = Granularity::line;
  Interleaving* interleaving_ = nullptr;
  std::vector<std::byte> durable_;
  std::vector<std::byte> shadow_;  // the region at the last capture
  std::vector<LineState> lines_;
  // A dropped fence makes a difference only if something is stored or written back before the next
  // fence; a dropped flush only if its lines are not written back again, unchanged, before it.
  bool dropped_fence_ = false;
  std::vector<size_t> dropped_lines_;
  uint64_t events_ = 0;
  uint64_t fences_ = 0;
  uint64_t dropped_values_ = 0;
};

}  // namespace pmlab::crash
