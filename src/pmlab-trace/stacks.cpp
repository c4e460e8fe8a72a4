#include "pmlab-trace/stacks.hpp"

#include <elf.h>
#include <execinfo.h>
#include <pthread.h>

#include <array>

namespace pmlab_trace::detail {
namespace {

uint64_t hash_frames(const uintptr_t* frames, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < n; ++i) {
    h ^= frames[i];
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  return h;
}

// The calling thread's stack bounds (where return addresses may be read).
struct ThreadStack {
  uintptr_t low = 0, high = 0;
};
thread_local ThreadStack tls_stack;

const ThreadStack& thread_stack() {
  if (tls_stack.high == 0) {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    tls_stack.low = reinterpret_cast<uintptr_t>(addr);
    tls_stack.high = tls_stack.low + size;
  }
  return tls_stack;
}

// A stack unwound before, kept with where its return addresses lay on the stack: a fence called with the
// same stack pointer and the same words at those places has the same call stack, and is not unwound again
// (unwinding costs microseconds a fence; comparing a few words, nanoseconds).
struct KnownStack {
  uintptr_t sp = 0, site = 0;
  uint32_t id = 0;
  uint32_t slots = 0;
  std::array<std::pair<uintptr_t, uintptr_t>, trace::kMaxFrames> slot{};  // (address, return address there)
};
// Per thread, two ways of 512 sets, by (stack pointer, call site): a recursive program fences at many
// depths, each its own stack pointer.
constexpr size_t kKnownSets = 512;
thread_local std::vector<KnownStack>* tls_known = nullptr;

bool still_there(const KnownStack& k) {
  for (uint32_t i = 0; i < k.slots; ++i)
    if (*reinterpret_cast<const uintptr_t*>(k.slot[i].first) != k.slot[i].second) return false;
  return true;
}

}  // namespace

uint32_t stack_id(Tracer& t, uintptr_t site) {
  if (t.stack_depth == 0) return trace::kNoStack;
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (tls_known == nullptr)
    tls_known = new std::vector<KnownStack>(2 * kKnownSets);  // lives as long as the thread may fence
  const size_t set = ((sp >> 4) ^ (site * 0x9e3779b97f4a7c15ULL >> 20)) % kKnownSets;
  KnownStack* way = &(*tls_known)[2 * set];
  for (int w = 0; w < 2; ++w)
    if (way[w].id != 0 && way[w].sp == sp && way[w].site == site && still_there(way[w])) {
      if (w == 1) std::swap(way[0], way[1]);  // most recently used first
      return way[0].id;
    }
  void* raw[trace::kMaxFrames + 8];
  const int got = backtrace(raw, static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames) + 8));
  uintptr_t frames[trace::kMaxFrames + 8];
  int n = 0;
  for (int i = 0; i < got; ++i) {
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (n == 0 && a >= t.own_begin && a < t.own_end) continue;
    if (n < static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames))) frames[n++] = a;
  }
  uint32_t id = 0;
  const uint64_t h = hash_frames(frames, n);
  auto& ids = t.stack_ids[h];
  for (uint32_t candidate : ids) {
    const auto& st = t.stacks[candidate - 1];
    if (st.size() == static_cast<size_t>(n) && std::equal(st.begin(), st.end(), frames)) id = candidate;
  }
  if (id == 0) {
    t.stacks.emplace_back(frames, frames + n);
    id = static_cast<uint32_t>(t.stacks.size());
    ids.push_back(id);
    trace::StackRecord rec{id, static_cast<uint32_t>(n)};
    t.file.append(trace::Kind::stack, 0, &rec, sizeof rec, frames, sizeof(uintptr_t) * static_cast<size_t>(n));
  }
  // Where each frame's return address lies (searched upward from here); cached only when all were found
  // (and the outermost frames, whose addresses the unwinder may not have read from the stack, are part of
  // the slots all the same: a stack whose words differ anywhere there is unwound again).
  const ThreadStack& bounds = thread_stack();
  KnownStack fresh;
  fresh.sp = sp;
  fresh.site = site;
  fresh.id = id;
  uintptr_t at = sp;
  for (int i = 0; i < got && fresh.slots < trace::kMaxFrames; ++i) {
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (i == 0 && a >= t.own_begin && a < t.own_end) continue;
    while (at + sizeof(uintptr_t) <= bounds.high && *reinterpret_cast<const uintptr_t*>(at) != a &&
           at - sp < (64u << 10))
      at += sizeof(uintptr_t);
    if (at + sizeof(uintptr_t) > bounds.high || at - sp >= (64u << 10)) return id;  // not found: not cached
    fresh.slot[fresh.slots++] = {at, a};
    at += sizeof(uintptr_t);
  }
  if (bounds.high != 0) {
    way[1] = way[0];
    way[0] = fresh;
  }
  return id;
}

namespace {

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

int write_module(dl_phdr_info* info, size_t, void* data) {
  auto& t = *static_cast<Tracer*>(data);
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) path = self_exe();  // only the executable has no name
  if (path.empty() || path.find("linux-vdso") != std::string::npos) return 0;
  std::vector<uint64_t> segments;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    segments.push_back(info->dlpi_addr + ph.p_vaddr);
    segments.push_back(info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  std::vector<std::byte> payload(sizeof(uint64_t) * segments.size() + path.size());
  std::memcpy(payload.data(), segments.data(), sizeof(uint64_t) * segments.size());
  std::memcpy(payload.data() + sizeof(uint64_t) * segments.size(), path.data(), path.size());
  trace::ModuleRecord rec{info->dlpi_addr, static_cast<uint32_t>(segments.size() / 2),
                          static_cast<uint32_t>(path.size())};
  t.file.append(trace::Kind::module, 0, &rec, sizeof rec, payload.data(), payload.size());
  return 0;
}

int find_own(dl_phdr_info* info, size_t, void* data) {
  auto& t = *static_cast<Tracer*>(data);
  const auto probe = reinterpret_cast<uintptr_t>(&find_own);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t b = info->dlpi_addr + ph.p_vaddr, e = b + ph.p_memsz;
    if (probe >= b && probe < e) {
      t.own_begin = b;
      t.own_end = e;
      return 1;
    }
  }
  return 0;
}

}  // namespace pmlab_trace::detail
