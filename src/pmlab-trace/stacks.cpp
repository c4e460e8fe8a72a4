#include "pmlab-trace/stacks.hpp"

#include <elf.h>
#include <pthread.h>
#include <unwind.h>

#include <array>

namespace pmlab_trace::detail {

PMLAB_TRACE_STATIC_TLS thread_local uintptr_t tls_trapped_at = 0;

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
PMLAB_TRACE_STATIC_TLS thread_local ThreadStack tls_stack;

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

// A stack unwound before, kept with the stack words its unwinding read: a fence called with the same stack
// pointer and the same words there has the same call stack, and is not unwound again (unwinding costs
// microseconds a fence; comparing a few words, nanoseconds).
constexpr size_t kMaxChecks = 48;
struct KnownStack {
  uintptr_t sp = 0, site = 0;
  uint32_t id = 0;
  uint32_t checks = 0;
  std::array<std::pair<uintptr_t, uintptr_t>, kMaxChecks> check{};  // (address, the word there)
};
// Per thread, 128 sets of 8 ways, by (stack pointer, call site): a recursive program fences at many depths,
// each its own stack pointer, and one site is reached at one depth from several callers (a tree's
// rotations).
constexpr size_t kKnownSets = 128, kKnownWays = 8;
PMLAB_TRACE_STATIC_TLS thread_local KnownStack* tls_known = nullptr;

bool still_there(const KnownStack& k) {
  for (uint32_t i = 0; i < k.checks; ++i)
    if (*reinterpret_cast<const uintptr_t*>(k.check[i].first) != k.check[i].second) return false;
  return true;
}

// A frame as the unwinder hands it over: where it returns to, the canonical frame address (CFA) of the
// frame it called (the stack pointer just before that call) and its frame pointer (rbp).
struct UnwoundFrame {
  uintptr_t ip, callee_cfa, rbp;
};
struct Unwinding {
  UnwoundFrame* frames;
  int max, n;
};
constexpr int kFramePointer = 6;  // rbp's DWARF number

_Unwind_Reason_Code collect(_Unwind_Context* context, void* arg) {
  auto& u = *static_cast<Unwinding*>(arg);
  const UnwoundFrame f{_Unwind_GetIP(context), _Unwind_GetCFA(context), _Unwind_GetGR(context, kFramePointer)};
  if (f.ip == 0 || u.n == u.max || (u.n > 0 && f.callee_cfa == u.frames[u.n - 1].callee_cfa)) return _URC_END_OF_STACK;
  u.frames[u.n++] = f;
  return _URC_NO_REASON;
}

// The stack words that place frames [0, n), or false where they cannot be told. The frames of this library
// up to stack_id's are placed by the stack pointer (stack_id's frame address). A call pushes the return address just
// below the callee's CFA, so frame i's return address lies at its callee_cfa - 8: checked, not assumed (a signal
// frame's lies elsewhere). Each frame's size follows from where it returns to, except where its CFA follows its frame
// pointer (CFA = rbp + 16) and it allocated on the stack (alloca): where its callee saved that rbp just below the
// return address (the frame-pointer convention) that word is checked too; a callee that saved rbp among other registers
// leaves a frame whose alloca changed unseen, while the stack pointer stayed the same.
bool words_read(const Tracer& t, const UnwoundFrame* frames, int n, uintptr_t sp, KnownStack& k) {
  const ThreadStack& bounds = thread_stack();
  auto word_at = [&](uintptr_t address, uintptr_t expected) {
    if (address < sp || address + sizeof(uintptr_t) > bounds.high || k.checks == kMaxChecks) return false;
    if (*reinterpret_cast<const uintptr_t*>(address) != expected) return false;
    k.check[k.checks++] = {address, expected};
    return true;
  };
  constexpr uintptr_t kWord = sizeof(uintptr_t);
  for (int i = 1; i < n; ++i) {
    const UnwoundFrame& f = frames[i];
    const bool own = f.ip >= t.own_begin && f.ip < t.own_end;
    if (own && f.callee_cfa - kWord < sp) continue;  // this library's frames below stack_id's are fixed
    if (!word_at(f.callee_cfa - kWord, f.ip)) return false;
    const bool by_frame_pointer = i + 1 < n && frames[i + 1].callee_cfa == f.rbp + 2 * kWord;
    const uintptr_t saved_at = f.callee_cfa - 2 * kWord;
    if (by_frame_pointer && saved_at >= sp && *reinterpret_cast<const uintptr_t*>(saved_at) == f.rbp &&
        !word_at(saved_at, f.rbp))
      return false;
  }
  return bounds.high != 0;
}

// Unwinds the calling thread's stack and records it when new; with `way`, also keeps it among its set's
// known stacks.
uint32_t unwind(Tracer& t, uintptr_t sp, uintptr_t site, KnownStack* way) {
  const int depth = static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames));
  UnwoundFrame unwound[trace::kMaxFrames + 8];
  Unwinding u{unwound, depth + 8, 0};
  _Unwind_Backtrace(collect, &u);
  uintptr_t frames[trace::kMaxFrames];
  int n = 0, last = 0;  // last: the outermost unwound frame recorded
  int first = 0;        // the first frame that may be the program's
  if (tls_trapped_at != 0)
    while (first < u.n && unwound[first].ip != tls_trapped_at) ++first;
  if (first == u.n) first = 0;
  for (int i = first; i < u.n && n < depth; ++i) {
    if (n == 0 && unwound[i].ip >= t.own_begin && unwound[i].ip < t.own_end) continue;
    frames[n++] = unwound[i].ip;
    last = i;
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
  if (way == nullptr) return id;
  KnownStack fresh;
  fresh.sp = sp;
  fresh.site = site;
  fresh.id = id;
  // Frames past the last recorded one change nothing recorded, but where the unwinder stopped before its
  // limit the stack ended, and where it ends is part of the stack too.
  const int read = u.n < depth + 8 ? u.n : last + 1;
  if (words_read(t, unwound, read, sp, fresh)) {
    // The oldest goes; a hit moves nothing (an entry is hundreds of bytes).
    std::rotate(way, way + kKnownWays - 1, way + kKnownWays);
    way[0] = fresh;
  }
  return id;
}

}  // namespace

uint32_t stack_id(Tracer& t, uintptr_t site) {
  if (t.stack_depth == 0) return trace::kNoStack;
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (!t.stack_cache) return unwind(t, sp, site, nullptr);
  if (tls_known == nullptr) {
    // Zero pages, committed only where a set is used; kept as long as the thread may fence.
    void* p = raw_mmap(nullptr, sizeof(KnownStack) * kKnownWays * kKnownSets, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mmap_failed(p)) return unwind(t, sp, site, nullptr);
    tls_known = static_cast<KnownStack*>(p);
  }
  const size_t set = ((sp >> 4) ^ (site * 0x9e3779b97f4a7c15ULL >> 20)) % kKnownSets;
  KnownStack* way = tls_known + kKnownWays * set;
  for (size_t w = 0; w < kKnownWays; ++w)
    if (way[w].id != 0 && way[w].sp == sp && way[w].site == site && still_there(way[w])) return way[w].id;
  return unwind(t, sp, site, way);
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

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
