// The persistence call sites a design reaches, and the one mutation applied to one of them.
//
// A site is a place in a design's source (file, line, column) and a kind of persistence call made there
// (persist::Call): a persist() at one line is two sites, its flush and its fence. Mutation testing removes
// or weakens one site at a time (a mutant) and asks whether the crash simulator notices; a site that is
// never observed (format, or a flush under eADR where nothing is flushed) has no mutants.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "pmlab/persist/observer.hpp"

namespace pmlab::crash {

struct SiteKey {
  persist::Call call = persist::Call::fence;
  std::string file;  // as the compiler names it
  uint32_t line = 0;
  uint32_t column = 0;
  auto operator<=>(const SiteKey&) const = default;
};

// "src/pmlab/primitives/log/log.cpp:88:5": the design's source position, relative to the source tree.
std::string site_position(const std::string& file, uint32_t line, uint32_t column);
// "src/pmlab/log/zero.cpp:88 (ZeroLog::append)": a source location trimmed for reading.
std::string site_of(const std::source_location& where);

struct Mutant {
  SiteKey site;
  persist::Mutation mutation = persist::Mutation::drop;
  std::string function;  // where the site is, for reading
  // "fence dropped at src/…/log.cpp:88:5 (Log::append)"
  std::string describe() const;
};

// The mutations that could reveal a bug at a site of this kind (none for read-modify-writes).
std::vector<persist::Mutation> mutations_of(persist::Call call);

// Why a call the mutant changed made no difference to what a crash could leave. A mutant all of whose
// changed calls were inert is equivalent to the design on this stream; the reasons say whether that is
// the design's doing (a redundant call: a performance finding) or the stream's (values that never reach
// the half of a word a split store would tear).
enum class Inert : uint8_t {
  nothing_to_order,       // a dropped fence with nothing written back (ADR) or stored (eADR) since the last
  nothing_to_write_back,  // a dropped flush of lines with nothing pending
  written_back_again,     // a dropped flush whose lines were written back again, unchanged, before the fence
  below_2_32,             // a split store whose old and new values were both below 2^32: the high half stayed
  one_half,               // a split store that changed one half only (a flag or bit in one half)
  volatile_word,          // a split store to bytes the design declared volatile: no crash state holds them
};
inline constexpr size_t kInertKinds = 6;
// "nothing_to_order": the name in results.json.
const char* to_string(Inert reason) noexcept;
// "a fence with nothing to order": for reading.
const char* describe(Inert reason) noexcept;
// A redundant call of the design's (a fence or flush that had nothing to do), not a limit of the stream.
bool is_redundant_call(Inert reason) noexcept;

// What the calls a mutant changed did, counted over a run and its recoveries.
struct MutationEffects {
  uint64_t effective = 0;
  std::array<uint64_t, kInertKinds> inert{};
  MutationEffects& operator+=(const MutationEffects& other) noexcept {
    effective += other.effective;
    for (size_t i = 0; i < kInertKinds; ++i) inert[i] += other.inert[i];
    return *this;
  }
};

class CallSites {
 public:
  CallSites() = default;
  explicit CallSites(std::optional<Mutant> mutant) : mutant_(std::move(mutant)) {}

  // Records the call (when recording) and says how to carry it out.
  persist::Mutation on_call(persist::Call call, const std::source_location& where) noexcept;
  // A call the mutant changed made a difference to what a crash could leave, or made none, for a reason.
  void note_effective() noexcept { ++effects_.effective; }
  void note_inert(Inert reason) noexcept { ++effects_.inert[static_cast<size_t>(reason)]; }

  void record(bool on) noexcept { recording_ = on; }
  // Sites seen while recording, with the function they are in.
  const std::map<SiteKey, std::string>& seen() const noexcept { return seen_; }
  void merge(const std::map<SiteKey, std::string>& more) { seen_.insert(more.begin(), more.end()); }
  const std::optional<Mutant>& mutant() const noexcept { return mutant_; }
  uint64_t mutated_calls() const noexcept { return mutated_calls_; }
  const MutationEffects& effects() const noexcept { return effects_; }

 private:
  std::optional<Mutant> mutant_;
  bool recording_ = false;
  std::map<SiteKey, std::string> seen_;
  uint64_t mutated_calls_ = 0;
  MutationEffects effects_;
};

// The bytes of an 8-byte word that differ in `changed` (old ^ new).
inline unsigned changed_bytes(uint64_t changed) noexcept {
  unsigned n = 0;
  for (; changed != 0; changed >>= 8) n += (changed & 0xff) != 0 ? 1 : 0;
  return n;
}
// Why a split store of `before` -> `after` that made no torn state was inert.
inline Inert split_store_inert(uint64_t before, uint64_t after) noexcept {
  return (before >> 32) == 0 && (after >> 32) == 0 ? Inert::below_2_32 : Inert::one_half;
}

// An observer that only applies a mutation and records sites: attached to a recovery that is not tracked.
class CallSiteObserver final : public persist::Observer {
 public:
  explicit CallSiteObserver(CallSites& sites) noexcept : sites_(sites) {}
  void on_writeback(const void*, size_t, persist::Writeback, const std::source_location&) noexcept override {}
  void on_fence(const std::source_location&) noexcept override {}
  // Without the contents at hand a dropped call counts as effective: equivalence is never claimed unseen.
  persist::Mutation mutation(persist::Call call, const void*, size_t,
                             const std::source_location& where) noexcept override {
    const persist::Mutation m = sites_.on_call(call, where);
    if (m == persist::Mutation::drop) sites_.note_effective();
    return m;
  }
  // Without the granularity at hand, a store that changed more than one byte counts as effective (its
  // bytes may tear).
  void after_split_store(const void*, uint64_t before, uint64_t after, const std::source_location&) noexcept override {
    if (changed_bytes(before ^ after) > 1) sites_.note_effective();
    else sites_.note_inert(split_store_inert(before, after));
  }

 private:
  CallSites& sites_;
};

}  // namespace pmlab::crash
