// The persistence call sites a design reaches, and the one mutation applied to one of them.
//
// A site is a place in a design's source (file, line, column) and a kind of persistence call made there
// (persist::Call): a persist() at one line is two sites, its flush and its fence. Mutation testing removes
// or weakens one site at a time (a mutant) and asks whether the crash simulator notices; a site that is
// never observed (format, or a flush under eADR where nothing is flushed) has no mutants.
#pragma once

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

class CallSites {
 public:
  CallSites() = default;
  explicit CallSites(std::optional<Mutant> mutant) : mutant_(std::move(mutant)) {}

  // Records the call (when recording) and says how to carry it out.
  persist::Mutation on_call(persist::Call call, const std::source_location& where) noexcept;
  // Whether a call the mutant changed made a difference: a dropped flush of lines with nothing pending, a
  // dropped fence with nothing to make durable, a split store with a half that did not change do not.
  void note_effect(bool effective) noexcept { effective_ += effective ? 1 : 0; }

  void record(bool on) noexcept { recording_ = on; }
  // Sites seen while recording, with the function they are in.
  const std::map<SiteKey, std::string>& seen() const noexcept { return seen_; }
  void merge(const std::map<SiteKey, std::string>& more) { seen_.insert(more.begin(), more.end()); }
  const std::optional<Mutant>& mutant() const noexcept { return mutant_; }
  uint64_t mutated_calls() const noexcept { return mutated_calls_; }
  uint64_t effective_mutations() const noexcept { return effective_; }

 private:
  std::optional<Mutant> mutant_;
  bool recording_ = false;
  std::map<SiteKey, std::string> seen_;
  uint64_t mutated_calls_ = 0;
  uint64_t effective_ = 0;
};

// An observer that only applies a mutation and records sites: attached to a recovery that is not tracked.
class CallSiteObserver final : public persist::Observer {
 public:
  explicit CallSiteObserver(CallSites& sites) noexcept : sites_(sites) {}
  void on_writeback(const void*, size_t, persist::Writeback, const std::source_location&) noexcept override {}
  void on_fence(const std::source_location&) noexcept override {}
  // Without the contents at hand a dropped call counts as effective: equivalence is never claimed unseen.
  persist::Mutation mutation(persist::Call call, const void*, size_t, const std::source_location& where) noexcept override {
    const persist::Mutation m = sites_.on_call(call, where);
    if (m == persist::Mutation::drop) sites_.note_effect(true);
    return m;
  }
  void after_split_store(const void*, bool effective, const std::source_location&) noexcept override {
    sites_.note_effect(effective);
  }

 private:
  CallSites& sites_;
};

}  // namespace pmlab::crash
