// What the simulator, its template process and its checkers share through memory mapped before the fork
// (crash/checker.cpp): a breadcrumb and a call-site log per checker, then a header and an image per slot;
// and the pipe messages between them. Internal to crash/.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "pmlab/crash/call_sites.hpp"
#include "pmlab/crash/image_mapping.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::checker_layout {

constexpr unsigned kMaxCheckers = 16;
constexpr size_t kMessageBytes = 2048;
constexpr size_t kDetailBytes = 1024;
constexpr size_t kSitesPerChecker = 256;

inline size_t round_pages(size_t n) { return ImageMapping::round_pages(n); }

enum Phase : int32_t { kIdle, kRecovery, kRecoveryAgain };

// What a checker is doing, where its template and the simulator can read it after it died.
struct Breadcrumb {
  std::atomic<int32_t> slot;
  std::atomic<int32_t> phase;
  std::atomic<uintptr_t> fault;                             // address of the fault that killed it
  std::atomic<uint64_t> mutation_effects[1 + kInertKinds];  // effective, then inert by reason
  char detail[kDetailBytes];                                // kRecoveryAgain: the crash inside recovery being recovered
};

inline void store_effects(Breadcrumb& crumb, const MutationEffects& e) noexcept {
  crumb.mutation_effects[0].store(e.effective);
  for (size_t i = 0; i < kInertKinds; ++i) crumb.mutation_effects[1 + i].store(e.inert[i]);
}
inline MutationEffects load_effects(const Breadcrumb& crumb) noexcept {
  MutationEffects e;
  e.effective = crumb.mutation_effects[0].load();
  for (size_t i = 0; i < kInertKinds; ++i) e.inert[i] = crumb.mutation_effects[1 + i].load();
  return e;
}
// A checker that ended: what it counted, moved out of its breadcrumb (the next one at its index starts at 0).
inline MutationEffects take_effects(Breadcrumb& crumb) noexcept {
  MutationEffects e;
  e.effective = crumb.mutation_effects[0].exchange(0);
  for (size_t i = 0; i < kInertKinds; ++i) e.inert[i] = crumb.mutation_effects[1 + i].exchange(0);
  return e;
}

struct SiteEntry {
  uint8_t call;
  uint32_t line, column;
  char file[240];
  char function[120];
};

struct SiteLog {
  std::atomic<uint32_t> count;
  SiteEntry entries[kSitesPerChecker];
};

struct SlotHeader {
  uint64_t tag;
  uint64_t ops_completed, fence_index, recovery_seed;
  uint8_t op_in_flight, at_exit, crash_recovery;
  uint32_t history_len;
  OpEvent history[kMaxOpEvents];  // a concurrent run's operations (CrashPoint::history)
  // The verdict.
  uint32_t ok, message_len;
  uint64_t recovery_states;
  char message[kMessageBytes];
};

// What a message on the results pipe says.
enum class MessageKind : uint32_t {
  verdict,        // a checker judged its slot
  checker_ended,  // the template saw a checker end (its wait status in `status`)
};

struct Message {
  MessageKind kind;
  uint32_t checker;
  int32_t slot;
  int32_t status;
};

// Moves all `len` bytes (a pipe may move fewer at a time); false on EOF or error.
template <class Fn, class Byte>
bool move_all(Fn&& io, int fd, Byte* p, size_t len) {
  while (len > 0) {
    const ssize_t n = io(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}
inline bool write_all(int fd, const void* data, size_t len) {
  return move_all(::write, fd, static_cast<const char*>(data), len);
}
inline bool read_all(int fd, void* data, size_t len) { return move_all(::read, fd, static_cast<char*>(data), len); }

inline void copy_text(char* out, size_t cap, const std::string& text) {
  const size_t n = std::min(cap - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// What the template and the checkers share with the simulator (all of it mapped before the fork).
struct Layout {
  std::byte* base = nullptr;
  size_t slots = 0;
  size_t image_stride = 0;
  Breadcrumb* crumbs() const { return reinterpret_cast<Breadcrumb*>(base); }
  SiteLog* sites() const { return reinterpret_cast<SiteLog*>(base + sizeof(Breadcrumb) * kMaxCheckers); }
  SlotHeader* header(size_t slot) const {
    return reinterpret_cast<SlotHeader*>(base + sizeof(Breadcrumb) * kMaxCheckers + sizeof(SiteLog) * kMaxCheckers) +
           slot;
  }
  size_t images_at() const {
    return round_pages(sizeof(Breadcrumb) * kMaxCheckers + sizeof(SiteLog) * kMaxCheckers + sizeof(SlotHeader) * slots);
  }
  std::byte* image(size_t slot) const { return base + images_at() + slot * image_stride; }
  size_t bytes() const { return images_at() + slots * image_stride; }
};

}  // namespace pmlab::crash::checker_layout
