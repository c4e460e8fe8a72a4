// The program's own flush, fence and non-temporal store instructions, trapped (pmlab/crash/exec/trap_format.hpp):
// crash exec found them in the program's code, and each is a breakpoint (int3) from the process's start.
// The SIGTRAP handler reports what the instruction does, as pmlab/trace.h's calls would, and does it:
// - a write-back (clwb, clflushopt, clflush): reported before it runs, while its line is still in the cache,
//   then run by the handler on the address the operand names;
// - a fence (sfence, mfence): reported (the crash point is just before it), then run by the handler;
// - a non-temporal store: run where the handler sends it, a copy of the instruction followed by a second
//   breakpoint; there its bytes are reported and the program goes on after the original. The registers the
//   address comes from are the same at both breakpoints: the store changes none.
// Each costs a signal (two for a store), where instrumenting the program would cost a call: the price of
// testing a program unmodified.
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/crash/exec/trap_format.hpp"
#include "pmlab-trace/stacks.hpp"
#include "pmlab-trace/state.hpp"
#include "pmlab-trace/tracer.hpp"
#include "pmlab-trace/write_tracking.hpp"

namespace pmlab_trace {
namespace {

using namespace detail;
namespace traps = pmlab::crash::exec::traps;
using traps::Register;
using traps::TrapKind;

struct Site {
  uintptr_t address = 0;  // where it is in this process
  uint8_t length = 0;
  TrapKind kind = TrapKind::sfence;
  Register base = Register::none, index = Register::none;
  uint8_t scale = 1;
  int64_t displacement = 0;
  uint32_t size = 0;
  uintptr_t copy = 0;  // a non-temporal store's copy, followed by a breakpoint
  uint8_t bytes[traps::kMaxInstructionBytes] = {};
};

// Read at the start, before the first breakpoint; read only after.
std::vector<Site> g_sites;                                 // by address
std::vector<std::pair<uintptr_t, uintptr_t>> g_functions;  // [begin, end), by begin
uintptr_t g_copies_begin = 0, g_copies_end = 0;            // the stores' copies, one kCopyBytes slot each
std::vector<const Site*> g_copy_sites;                     // by slot
struct sigaction g_program_action {};                      // the program's own for SIGTRAP
std::atomic<bool> g_takes_sigtrap{false};
std::string g_note;
constexpr size_t kCopyBytes = 32;

// A module's sites, as the file gives them, in its own addresses.
struct FileModule {
  std::string path;
  std::vector<std::pair<uintptr_t, uintptr_t>> functions;
  std::vector<Site> sites;
};

bool parse_hex_bytes(const char* text, Site& s) {
  const size_t n = std::strlen(text) / 2;
  if (n == 0 || n > traps::kMaxInstructionBytes) return false;
  for (size_t i = 0; i < n; ++i) {
    unsigned b = 0;
    if (std::sscanf(text + 2 * i, "%2x", &b) != 1) return false;
    s.bytes[i] = static_cast<uint8_t>(b);
  }
  s.length = static_cast<uint8_t>(n);
  return true;
}

// The file crash exec wrote; empty where it cannot be read.
std::vector<FileModule> read_sites(const char* path) {
  std::vector<FileModule> modules;
  const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return modules;
  std::string text;
  char chunk[65536];
  for (ssize_t n; (n = syscall(SYS_read, fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<size_t>(n));
  syscall(SYS_close, fd);
  size_t at = 0;
  bool header = false;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (!header) {
      header = line == traps::kHeader;
      if (!header) return {};
      continue;
    }
    if (line.rfind("module ", 0) == 0) {
      modules.push_back({line.substr(7), {}, {}});
      continue;
    }
    if (modules.empty()) continue;
    unsigned long long a = 0, b = 0;
    if (std::sscanf(line.c_str(), "function %llx %llx", &a, &b) == 2) {
      modules.back().functions.emplace_back(a, b);
      continue;
    }
    int kind = 0, base = 0, index = 0, scale = 0;
    long long displacement = 0;
    unsigned size = 0;
    char hex[2 * traps::kMaxInstructionBytes + 2] = {};
    if (std::sscanf(line.c_str(), "site %llx %d %d %d %d %lld %u %31s", &a, &kind, &base, &index, &scale, &displacement,
                    &size, hex) != 8)
      continue;
    Site s;
    s.address = a;
    s.kind = static_cast<TrapKind>(kind);
    s.base = static_cast<Register>(base);
    s.index = static_cast<Register>(index);
    s.scale = static_cast<uint8_t>(scale);
    s.displacement = displacement;
    s.size = size;
    if (kind <= static_cast<int>(TrapKind::non_temporal_store) && parse_hex_bytes(hex, s))
      modules.back().sites.push_back(s);
  }
  return modules;
}

struct LoadedModule {
  std::string path;
  uintptr_t bias;
};

int list_module(dl_phdr_info* info, size_t, void* data) {
  auto& loaded = *static_cast<std::vector<LoadedModule>*>(data);
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) path = self_exe();
  if (!path.empty()) loaded.push_back({path, info->dlpi_addr});
  return 0;
}

// Writes the breakpoint at each site that holds the bytes crash exec found (a page at a time made writable,
// then executable again); the others are counted in `mismatched`.
void place_breakpoints(std::vector<Site>& sites, size_t& mismatched, size_t& refused) {
  const auto page_of = [](uintptr_t a) { return a & ~uintptr_t{kPageBytes - 1}; };
  std::vector<Site> placed;
  for (Site& s : sites) {
    if (std::memcmp(reinterpret_cast<const void*>(s.address), s.bytes, s.length) != 0) {
      ++mismatched;
      continue;
    }
    // The first byte only: the instruction is at least 3 bytes and within one page or across two.
    void* page = reinterpret_cast<void*>(page_of(s.address));
    if (mprotect(page, kPageBytes, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
      ++refused;
      continue;
    }
    *reinterpret_cast<volatile uint8_t*>(s.address) = 0xcc;
    mprotect(page, kPageBytes, PROT_READ | PROT_EXEC);
    placed.push_back(s);
  }
  sites = std::move(placed);
}

// A copy of each non-temporal store, each followed by a breakpoint.
bool place_copies() {
  size_t stores = 0;
  for (const Site& s : g_sites) stores += s.kind == TrapKind::non_temporal_store;
  if (stores == 0) return true;
  const size_t bytes = (stores * kCopyBytes + kPageBytes - 1) & ~size_t{kPageBytes - 1};
  void* p = raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mmap_failed(p)) return false;
  auto* out = static_cast<uint8_t*>(p);
  for (Site& s : g_sites) {
    if (s.kind != TrapKind::non_temporal_store) continue;
    uint8_t* slot = out + kCopyBytes * g_copy_sites.size();
    std::memcpy(slot, s.bytes, s.length);
    slot[s.length] = 0xcc;
    s.copy = reinterpret_cast<uintptr_t>(slot);
    g_copy_sites.push_back(&s);
  }
  if (mprotect(p, bytes, PROT_READ | PROT_EXEC) != 0) return false;
  g_copies_begin = reinterpret_cast<uintptr_t>(p);
  g_copies_end = g_copies_begin + bytes;
  return true;
}

const Site* site_at(uintptr_t address) {
  auto it = std::lower_bound(g_sites.begin(), g_sites.end(), address,
                             [](const Site& s, uintptr_t a) { return s.address < a; });
  return it != g_sites.end() && it->address == address ? &*it : nullptr;
}

// The site whose copy's breakpoint is at `address`.
const Site* copy_end_at(uintptr_t address) {
  if (address < g_copies_begin || address >= g_copies_end) return nullptr;
  const size_t slot = (address - g_copies_begin) / kCopyBytes;
  if (slot >= g_copy_sites.size()) return nullptr;
  const Site* s = g_copy_sites[slot];
  return s->copy + s->length == address ? s : nullptr;
}

greg_t register_value(const greg_t* g, Register r) {
  static constexpr int kGregs[] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                   REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  return g[kGregs[static_cast<int>(r)]];
}

// The address the site's operand names, from the registers at the instruction.
uintptr_t operand_address(const Site& s, const greg_t* g) {
  uintptr_t a = static_cast<uintptr_t>(s.displacement);
  if (s.base == Register::rip) a += s.address + s.length;
  else if (s.base != Register::none) a += static_cast<uintptr_t>(register_value(g, s.base));
  if (s.index != Register::none) a += static_cast<uintptr_t>(register_value(g, s.index)) * s.scale;
  return a;
}

void run_write_back(TrapKind kind, uintptr_t a) {
  const auto* p = reinterpret_cast<const volatile char*>(a);
  if (kind == TrapKind::clwb) asm volatile("clwb %0" ::"m"(*p) : "memory");
  else if (kind == TrapKind::clflushopt) asm volatile("clflushopt %0" ::"m"(*p) : "memory");
  else asm volatile("clflush %0" ::"m"(*p) : "memory");
}

void on_sigtrap(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* g = uc->uc_mcontext.gregs;
  const auto trapped = static_cast<uintptr_t>(g[REG_RIP]) - 1;  // int3 leaves rip past itself
  const Site* s = site_at(trapped);
  const Site* stored = s == nullptr ? copy_end_at(trapped) : nullptr;
  if (s == nullptr && stored == nullptr) {
    forward_signal(g_program_action, sig, info, context);
    return;
  }
  const int saved_errno = errno;
  // Reported as a call's return address is: one byte past the instruction's start names it.
  const uintptr_t site = (s != nullptr ? s : stored)->address + 1;
  tls_trapped_at = static_cast<uintptr_t>(g[REG_RIP]);
  if (stored != nullptr) {
    stored_non_temporal(reinterpret_cast<void*>(operand_address(*stored, g)), stored->size, site);
    g[REG_RIP] = static_cast<greg_t>(stored->address + stored->length);
  } else if (s->kind == TrapKind::non_temporal_store) {
    g[REG_RIP] = static_cast<greg_t>(s->copy);
  } else if (s->kind == TrapKind::sfence || s->kind == TrapKind::mfence) {
    fence(site);
    if (s->kind == TrapKind::sfence) asm volatile("sfence" ::: "memory");
    else asm volatile("mfence" ::: "memory");
    g[REG_RIP] = static_cast<greg_t>(s->address + s->length);
  } else {
    const uintptr_t a = operand_address(*s, g);
    writeback(reinterpret_cast<void*>(a), 1, trace::WritebackKind::flush, site);
    run_write_back(s->kind, a);
    g[REG_RIP] = static_cast<greg_t>(s->address + s->length);
  }
  tls_trapped_at = 0;
  errno = saved_errno;
}

}  // namespace

void install_traps(const char* path) noexcept {
  std::vector<FileModule> modules = read_sites(path);
  std::vector<LoadedModule> loaded;
  dl_iterate_phdr(list_module, &loaded);
  size_t found = 0, mismatched = 0, refused = 0;
  std::string where;
  for (FileModule& m : modules) {
    auto it = std::find_if(loaded.begin(), loaded.end(), [&](const LoadedModule& l) { return l.path == m.path; });
    if (it == loaded.end()) continue;
    for (Site& s : m.sites) s.address += it->bias;
    found += m.sites.size();
    const size_t placed_before = g_sites.size();
    place_breakpoints(m.sites, mismatched, refused);
    g_sites.insert(g_sites.end(), m.sites.begin(), m.sites.end());
    for (const auto& [begin, end] : m.functions)
      g_functions.emplace_back(begin + it->bias, end == UINT64_MAX ? UINTPTR_MAX : end + it->bias);
    if (g_sites.size() > placed_before) {
      const size_t slash = m.path.rfind('/');
      where += (where.empty() ? "" : ", ") + std::to_string(g_sites.size() - placed_before) + " in " +
               m.path.substr(slash == std::string::npos ? 0 : slash + 1);
    }
  }
  if (found == 0) return;
  std::sort(g_sites.begin(), g_sites.end(), [](const Site& a, const Site& b) { return a.address < b.address; });
  std::sort(g_functions.begin(), g_functions.end());
  if (!place_copies()) {
    g_note = "the program's own non-temporal stores cannot be trapped (no memory for their copies)";
    return;
  }
  struct sigaction mine {};
  mine.sa_sigaction = on_sigtrap;
  mine.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&mine.sa_mask);
  if (libc_sigaction(SIGTRAP, &mine, &g_program_action) != 0) return;
  g_takes_sigtrap = true;
  if (!g_sites.empty())
    g_note =
        "the program's own flush, fence and non-temporal store instructions are trapped (a breakpoint each, "
        "reported as it runs them): " +
        where;
  if (mismatched + refused > 0)
    g_note += std::string(g_note.empty() ? "" : "; ") + std::to_string(mismatched + refused) + " were not trapped (" +
              std::to_string(mismatched) + " held other bytes than crash exec found, " + std::to_string(refused) +
              " in code that could not be made writable): what they do is not seen";
}

const std::string& traps_note() noexcept { return g_note; }

bool reported_by_traps(uintptr_t site) noexcept {
  if (g_functions.empty()) return false;
  const uintptr_t at = site - 1;  // a return address: the call lies one byte back
  auto it = std::upper_bound(g_functions.begin(), g_functions.end(), at,
                             [](uintptr_t a, const std::pair<uintptr_t, uintptr_t>& f) { return a < f.first; });
  return it != g_functions.begin() && at < std::prev(it)->second;
}

bool takes_sigtrap() noexcept { return g_takes_sigtrap.load(std::memory_order_relaxed); }

bool program_sigtrap(const struct sigaction* act, struct sigaction* old) noexcept {
  if (!takes_sigtrap()) return false;
  if (old != nullptr) *old = g_program_action;
  if (act != nullptr) g_program_action = *act;
  return true;
}

}  // namespace pmlab_trace
