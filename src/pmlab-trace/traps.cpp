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
//
// A module of the file that the process loads later (dlopen: a plugin, a Python extension) is trapped as it
// loads (interpose_dl.cpp calls traps_after_load): its sites go into a table of their own, published before
// any of its breakpoints is written, so a thread that runs one finds it. Tables are never changed or freed.
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <memory>
#include <mutex>
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
  int protection = 0;  // its segment's
  uint8_t bytes[traps::kMaxInstructionBytes] = {};
};

// The sites of one placing (at the start, then after each load that brought modules of the file).
struct TrapTable {
  std::vector<Site> sites;                                 // by address
  std::vector<std::pair<uintptr_t, uintptr_t>> functions;  // [begin, end), by begin: every instruction trapped
  uintptr_t copies_begin = 0, copies_end = 0;              // the stores' copies, one kCopyBytes slot each
  std::vector<const Site*> copy_sites;                     // by slot
};

// A module's sites, as the file gives them, in its own addresses.
struct FileModule {
  std::string path;
  std::vector<std::pair<uintptr_t, uintptr_t>> functions;
  std::vector<Site> sites;
};

// Reached through a function, as tracer() is: the runtime's constructor runs before this file's own static
// initializers would. The handler reads only the published tables, program_action and takes_sigtrap.
struct Traps {
  static constexpr size_t kMaxTables = 256;  // placings; a load past the last one is not trapped
  std::atomic<const TrapTable*> tables[kMaxTables] = {};
  std::atomic<size_t> published{0};
  std::mutex placing;               // what follows, to the program's action
  std::vector<FileModule> waiting;  // the file's modules not loaded yet
  std::atomic<bool> any_waiting{false};
  unsigned long long loads_seen = 0;  // dl_phdr_info::dlpi_adds at the last placing
  std::string where;                  // "3 in kv, 2 in plugin.so"
  size_t mismatched = 0, refused = 0;
  std::string note;
  struct sigaction program_action {};  // the program's own for SIGTRAP
  std::atomic<bool> takes_sigtrap{false};
};
Traps& traps_state() {
  static Traps* t = new Traps;  // never destroyed: a trap may come after static destructors ran
  return *t;
}
constexpr size_t kCopyBytes = 32;

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
  const int fd = static_cast<int>(raw_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return modules;
  std::string text;
  char chunk[65536];
  for (ssize_t n; (n = raw_syscall(SYS_read, fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<size_t>(n));
  raw_syscall(SYS_close, fd);
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
    // A line that does not describe a site the handler can run is left out: a register it would read out of
    // the context's bounds, a store of no width.
    const auto is_register = [](int r) { return r >= -1 && r <= static_cast<int>(Register::rip); };
    const bool store = kind == static_cast<int>(TrapKind::non_temporal_store);
    if (kind < 0 || kind > static_cast<int>(TrapKind::non_temporal_store) || !is_register(base) ||
        !is_register(index) || index == static_cast<int>(Register::rip) ||
        (scale != 1 && scale != 2 && scale != 4 && scale != 8) ||
        (store && (size == 0 || size > 64 || base == static_cast<int>(Register::rip))))
      continue;
    Site s;
    s.address = a;
    s.kind = static_cast<TrapKind>(kind);
    s.base = static_cast<Register>(base);
    s.index = static_cast<Register>(index);
    s.scale = static_cast<uint8_t>(scale);
    s.displacement = displacement;
    s.size = size;
    if (parse_hex_bytes(hex, s)) modules.back().sites.push_back(s);
  }
  return modules;
}

// A loaded module: where it is, and its loaded segments with the protection each was mapped with.
struct LoadedModule {
  std::string path;
  uintptr_t bias;
  struct Segment {
    uintptr_t begin, end;
    int protection;
  };
  std::vector<Segment> segments;
  // The protection of the segment holding [a, a + n), or -1 where no one segment holds it all.
  int protection_of(uintptr_t a, size_t n) const {
    for (const Segment& g : segments)
      if (a >= g.begin && a + n <= g.end) return g.protection;
    return -1;
  }
};

int list_module(dl_phdr_info* info, size_t, void* data) {
  auto& loaded = *static_cast<std::vector<LoadedModule>*>(data);
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) path = self_exe();
  if (path.empty()) return 0;
  LoadedModule m{path, info->dlpi_addr, {}};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const int protection = (ph.p_flags & PF_R ? PROT_READ : 0) | (ph.p_flags & PF_W ? PROT_WRITE : 0) |
                           (ph.p_flags & PF_X ? PROT_EXEC : 0);
    m.segments.push_back({info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz, protection});
  }
  loaded.push_back(std::move(m));
  return 0;
}

// Readies each site that holds the bytes crash exec found, in executable code of the module, for its
// breakpoint: its page made writable (write_breakpoints gives it back the protection its segment was mapped
// with). The sites left are those readied; the others' addresses go to `missed`, each counted in
// `mismatched` (other bytes there, or no executable segment) or `refused` (a page that cannot be made
// writable).
void ready_sites(const LoadedModule& module, std::vector<Site>& sites, std::vector<uintptr_t>& missed,
                 size_t& mismatched, size_t& refused) {
  std::vector<Site> ready;
  for (Site& s : sites) {
    const int protection = module.protection_of(s.address, s.length);
    if (protection < 0 || !(protection & PROT_EXEC) ||
        std::memcmp(reinterpret_cast<const void*>(s.address), s.bytes, s.length) != 0) {
      ++mismatched;
      missed.push_back(s.address);
      continue;
    }
    void* page = reinterpret_cast<void*>(s.address & ~uintptr_t{kPageBytes - 1});
    if (mprotect(page, kPageBytes, protection | PROT_WRITE) != 0) {
      ++refused;
      missed.push_back(s.address);
      continue;
    }
    s.protection = protection;
    ready.push_back(s);
  }
  sites = std::move(ready);
}

// Gives each site's page back its segment's protection.
void protect_again(const TrapTable& table) {
  for (const Site& s : table.sites)
    mprotect(reinterpret_cast<void*>(s.address & ~uintptr_t{kPageBytes - 1}), kPageBytes, s.protection);
}

// Only each site's first byte changes.
void write_breakpoints(const TrapTable& table) {
  for (const Site& s : table.sites) *reinterpret_cast<volatile uint8_t*>(s.address) = 0xcc;
  protect_again(table);
}

// A copy of each non-temporal store, each followed by a breakpoint.
bool place_copies(TrapTable& t) {
  size_t stores = 0;
  for (const Site& s : t.sites) stores += s.kind == TrapKind::non_temporal_store;
  if (stores == 0) return true;
  const size_t bytes = (stores * kCopyBytes + kPageBytes - 1) & ~size_t{kPageBytes - 1};
  void* p = raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mmap_failed(p)) return false;
  auto* out = static_cast<uint8_t*>(p);
  for (Site& s : t.sites) {
    if (s.kind != TrapKind::non_temporal_store) continue;
    uint8_t* slot = out + kCopyBytes * t.copy_sites.size();
    std::memcpy(slot, s.bytes, s.length);
    slot[s.length] = 0xcc;
    s.copy = reinterpret_cast<uintptr_t>(slot);
    t.copy_sites.push_back(&s);
  }
  if (mprotect(p, bytes, PROT_READ | PROT_EXEC) != 0) return false;
  t.copies_begin = reinterpret_cast<uintptr_t>(p);
  t.copies_end = t.copies_begin + bytes;
  return true;
}

// The site at `address`, or the site whose copy's breakpoint is there (`stored`), in the published tables.
const Site* site_at(uintptr_t address, bool& stored) {
  const Traps& state = traps_state();
  const size_t n = state.published.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    const TrapTable& t = *state.tables[i].load(std::memory_order_relaxed);
    auto it = std::lower_bound(t.sites.begin(), t.sites.end(), address,
                               [](const Site& s, uintptr_t a) { return s.address < a; });
    if (it != t.sites.end() && it->address == address) {
      stored = false;
      return &*it;
    }
    if (address < t.copies_begin || address >= t.copies_end) continue;
    const size_t slot = (address - t.copies_begin) / kCopyBytes;
    if (slot >= t.copy_sites.size()) continue;
    const Site* s = t.copy_sites[slot];
    if (s->copy + s->length != address) continue;
    stored = true;
    return s;
  }
  return nullptr;
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
  bool copy_ended = false;
  const Site* s = site_at(trapped, copy_ended);
  if (s == nullptr) {
    forward_signal(traps_state().program_action, sig, info, context);
    return;
  }
  const Site* stored = copy_ended ? s : nullptr;
  if (copy_ended) s = nullptr;
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

// "3 in plugin.so"
std::string sites_in(const FileModule& m) {
  const size_t slash = m.path.rfind('/');
  return std::to_string(m.sites.size()) + " in " + m.path.substr(slash == std::string::npos ? 0 : slash + 1);
}

// Places the sites of every waiting module that is loaded now, as one table; `t.placing` held. Returns the
// modules placed, "3 in kv, 2 in plugin.so" ("": none).
std::string place_loaded(Traps& t) {
  const size_t n = t.published.load(std::memory_order_relaxed);
  if (n == Traps::kMaxTables) return {};
  std::vector<LoadedModule> loaded;
  dl_iterate_phdr(list_module, &loaded);
  auto table = std::make_unique<TrapTable>();
  std::string where;
  std::vector<FileModule> still;
  for (FileModule& m : t.waiting) {
    auto it = std::find_if(loaded.begin(), loaded.end(), [&](const LoadedModule& l) { return l.path == m.path; });
    if (it == loaded.end()) {
      still.push_back(std::move(m));
      continue;
    }
    for (Site& s : m.sites) s.address += it->bias;
    std::vector<uintptr_t> missed;
    ready_sites(*it, m.sites, missed, t.mismatched, t.refused);
    table->sites.insert(table->sites.end(), m.sites.begin(), m.sites.end());
    // pmlab/trace.h's reports are dropped only from functions whose every instruction is trapped.
    for (const auto& [begin, end] : m.functions) {
      const uintptr_t from = begin + it->bias, to = end == UINT64_MAX ? UINTPTR_MAX : end + it->bias;
      if (std::none_of(missed.begin(), missed.end(), [&](uintptr_t a) { return a >= from && a < to; }))
        table->functions.emplace_back(from, to);
    }
    if (!m.sites.empty()) where += (where.empty() ? "" : ", ") + sites_in(m);
  }
  t.waiting = std::move(still);
  t.any_waiting.store(!t.waiting.empty(), std::memory_order_relaxed);
  if (table->sites.empty()) return {};
  std::sort(table->sites.begin(), table->sites.end(),
            [](const Site& a, const Site& b) { return a.address < b.address; });
  std::sort(table->functions.begin(), table->functions.end());
  bool handled = t.takes_sigtrap.load(std::memory_order_relaxed);
  if (!handled) {
    struct sigaction mine {};
    mine.sa_sigaction = on_sigtrap;
    mine.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&mine.sa_mask);
    handled = libc_sigaction(SIGTRAP, &mine, &t.program_action) == 0;
    t.takes_sigtrap = handled;
  }
  if (!handled || !place_copies(*table)) {
    protect_again(*table);  // no breakpoint written
    if (handled) t.note = "the program's own non-temporal stores cannot be trapped (no memory for their copies)";
    return {};
  }
  const TrapTable* placed = table.release();  // never freed: a trap may come at any time after
  t.tables[n].store(placed, std::memory_order_relaxed);
  t.published.store(n + 1, std::memory_order_release);
  write_breakpoints(*placed);
  return where;
}

// The trace's note on what is trapped so far; `t.placing` held.
void write_note(Traps& t) {
  t.note = t.where.empty() ? std::string()
                           : "the program's own flush, fence and non-temporal store instructions are trapped (a "
                             "breakpoint each, reported as it runs them): " +
                                 t.where;
  if (t.mismatched + t.refused > 0)
    t.note += std::string(t.note.empty() ? "" : "; ") + std::to_string(t.mismatched + t.refused) +
              " were not trapped (" + std::to_string(t.mismatched) + " held other bytes than crash exec found, " +
              std::to_string(t.refused) + " in code that could not be made writable): what they do is not seen";
}

int count_loads(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;
}

}  // namespace

void install_traps(const char* path) noexcept {
  Traps& t = traps_state();
  std::lock_guard lock(t.placing);
  t.waiting = read_sites(path);
  dl_iterate_phdr(count_loads, &t.loads_seen);
  t.where = place_loaded(t);
  write_note(t);
}

bool traps_waiting() noexcept { return traps_state().any_waiting.load(std::memory_order_relaxed); }

void traps_after_load() noexcept {
  Traps& t = traps_state();
  if (!t.any_waiting.load(std::memory_order_relaxed)) return;
  std::string where;
  {
    std::lock_guard lock(t.placing);
    unsigned long long loads = 0;
    dl_iterate_phdr(count_loads, &loads);
    if (loads == t.loads_seen) return;
    t.loads_seen = loads;
    where = place_loaded(t);
    if (where.empty()) return;
    t.where += (t.where.empty() ? "" : ", ") + where;
    write_note(t);
  }
  Tracer& tr = tracer();
  if (tr.active) note(tr, "the program's own instructions in modules it loaded later are trapped too: " + where);
}

std::string traps_missed() noexcept {
  Traps& t = traps_state();
  if (!t.any_waiting.load(std::memory_order_relaxed)) return {};
  std::lock_guard lock(t.placing);
  std::vector<LoadedModule> loaded;
  dl_iterate_phdr(list_module, &loaded);
  std::string missed;
  for (const FileModule& m : t.waiting)
    if (std::any_of(loaded.begin(), loaded.end(), [&](const LoadedModule& l) { return l.path == m.path; }))
      missed += (missed.empty() ? "" : ", ") + sites_in(m);
  return missed.empty() ? missed
                        : "the program's own instructions in modules it loaded by their names alone, with no dlsym "
                          "after, were not trapped: " +
                              missed + "; what they do is not seen";
}

std::string traps_note() noexcept {
  Traps& t = traps_state();
  std::lock_guard lock(t.placing);
  return t.note;
}

bool reported_by_traps(uintptr_t site) noexcept {
  const Traps& state = traps_state();
  const size_t n = state.published.load(std::memory_order_acquire);
  const uintptr_t at = site - 1;  // a return address: the call lies one byte back
  for (size_t i = 0; i < n; ++i) {
    const auto& functions = state.tables[i].load(std::memory_order_relaxed)->functions;
    auto it = std::upper_bound(functions.begin(), functions.end(), at,
                               [](uintptr_t a, const std::pair<uintptr_t, uintptr_t>& f) { return a < f.first; });
    if (it != functions.begin() && at < std::prev(it)->second) return true;
  }
  return false;
}

bool takes_sigtrap() noexcept { return traps_state().takes_sigtrap.load(std::memory_order_relaxed); }

bool program_sigtrap(const struct sigaction* act, struct sigaction* old) noexcept {
  if (!takes_sigtrap()) return false;
  Traps& t = traps_state();
  // Two threads of the program may set their action at once; the handler, which may not wait, reads it as is.
  std::lock_guard lock(t.placing);
  if (old != nullptr) *old = t.program_action;
  if (act != nullptr) t.program_action = *act;
  return true;
}

}  // namespace pmlab_trace
