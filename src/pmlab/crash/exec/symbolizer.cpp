#include "pmlab/crash/exec/symbolizer.hpp"

#include <elf.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {

bool library_module(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  // PMDK's libraries by their whole names: a program's own libpmem-something is the program's.
  static const char* const libraries[] = {
      "libpmem.so",     "libpmem2.so", "libpmemobj.so", "libpmemlog.so", "libpmemblk.so", "libpmempool.so",
      "libpmlab-trace", "libpmlab.so", "libc.so",       "libc-",         "ld-linux",      "libstdc++",
      "libgcc_s",       "libm.so",     "libpthread",    "libndctl",      "libdaxctl",     "libdl."};
  return std::any_of(std::begin(libraries), std::end(libraries), [&](const char* l) { return name.rfind(l, 0) == 0; });
}

bool library_function(const std::string& function) { return function.rfind("pmlab::", 0) == 0; }

bool library_source(const std::string& path) {
  if (path.rfind("/usr/include/", 0) == 0 || path.rfind("/usr/lib/", 0) == 0 ||
      path.find("/include/pmlab/") != std::string::npos)
    return true;
  // Rust's standard library, compiled into every Rust program from the toolchain's library/ sources.
  for (const char* crate : {"library/std/src/", "library/core/src/", "library/alloc/src/"})
    if (path.find(crate) != std::string::npos) return true;
  return false;
}

bool standard_library_function(const std::string& function) {
  for (const char* prefix : {"std::", "core::", "alloc::", "<std::", "<core::", "<alloc::"})
    if (function.rfind(prefix, 0) == 0) return true;
  return false;
}

namespace {

// Whether the ELF file at `path` keeps its full symbol table (.symtab), which names every function; a
// stripped file has only its exported symbols.
bool has_symbol_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
    return false;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!in.seekg(static_cast<std::streamoff>(eh.e_shoff + i * sizeof sh)) ||
        !in.read(reinterpret_cast<char*>(&sh), sizeof sh))
      return false;
    if (sh.sh_type == SHT_SYMTAB) return true;
  }
  return false;
}

}  // namespace

std::string Frame::text() const {
  if (function == "?" || function.empty()) return location;
  return function + " (" + location + ")";
}

const TraceModule* Symbolizer::module_of(uint64_t address) const {
  for (const TraceModule& m : modules_)
    for (const auto& [b, e] : m.segments)
      if (address >= b && address < e) return &m;
  return nullptr;
}

void Symbolizer::resolve(const std::vector<uint64_t>& addresses) {
  std::map<const TraceModule*, std::vector<uint64_t>> by_module;
  for (uint64_t a : addresses) {
    if (a == 0 || known_.count(a)) continue;
    const TraceModule* m = module_of(a);
    Frame f;
    f.address = a;
    f.function = "?";
    char buf[64];
    if (m == nullptr) {
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, a);
      f.location = buf;
      known_[a] = f;
      continue;
    }
    std::snprintf(buf, sizeof buf, "+0x%" PRIx64, a - m->bias);
    f.location = std::filesystem::path(m->path).filename().string() + buf;
    f.own = !library_module(m->path);
    known_[a] = f;
    by_module[m].push_back(a);
  }
  const auto addr2line = platform::find_program("addr2line");
  if (!addr2line) return;
  for (const auto& [m, list] : by_module) {
    const auto [table, unread] = symbol_tables_.try_emplace(m->path, false);
    if (unread) table->second = has_symbol_table(m->path);
    const bool named = table->second;
    platform::ProcessSpec spec;
    // -a starts each address's lines with the address, -i follows them with the frames it was inlined into.
    spec.argv = {*addr2line, "-a", "-f", "-C", "-i", "-e", m->path};
    for (uint64_t a : list) {
      // A return address points after its call: the call's own line is one byte back.
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, a - m->bias - 1);
      spec.argv.push_back(buf);
    }
    spec.timeout_s = 30;
    auto run = platform::run_process(spec);
    if (run && run->ok()) read_names(list, run->out, named);
  }
}

void Symbolizer::read_names(const std::vector<uint64_t>& list, const std::string& out, bool named) {
  std::istringstream lines(out);
  std::string line;
  size_t next = 0;
  uint64_t a = 0;
  bool own_module = false;
  int level = -1;  // of the current address: 0 its own frame, then its inlined callers
  while (std::getline(lines, line)) {
    if (line.rfind("0x", 0) == 0 && line.find_first_not_of("0123456789abcdefx") == std::string::npos) {
      if (next == list.size()) break;
      a = list[next++];
      own_module = known_[a].own;
      level = 0;
      continue;
    }
    std::string location;
    if (level < 0 || !std::getline(lines, location)) break;
    // "file.c:42", "file.c:42 (discriminator 3)", or "??:0"/"??:?" without line information.
    if (const size_t d = location.find(" (discriminator"); d != std::string::npos) location.resize(d);
    const bool has_line = location.rfind("??", 0) != 0 && location.find(":?") == std::string::npos;
    const std::string source = has_line ? location.substr(0, location.rfind(':')) : std::string();
    Frame f = level == 0 ? known_[a] : Frame{a, "?", "", own_module};
    if (has_line) f.location = std::filesystem::path(location).filename().string();
    // A stripped library names an address by the exported symbol before it, which is seldom the function
    // it is in: without a line, only the program's own frames and a module with its symbol table get one.
    if (line != "??" && (has_line || f.own || named)) f.function = line;
    // With a line, its source tells: addr2line names an inlined innermost frame by the function it is
    // inlined into (a C++ thread's lambda by std::thread's _M_run).
    if (library_function(f.function) || library_source(source) || (!has_line && standard_library_function(f.function)))
      f.own = false;
    if (level == 0) known_[a] = f;
    else if (has_line) callers_[a].push_back(f);
    ++level;
  }
}

Frame Symbolizer::frame(uint64_t address) {
  if (!known_.count(address)) resolve({address});
  return known_[address];
}

Frame Symbolizer::own_frame(uint64_t address) {
  const Frame innermost = frame(address);
  if (innermost.own) return innermost;
  if (const auto inlined = callers_.find(address); inlined != callers_.end())
    for (const Frame& f : inlined->second)
      if (f.own) return f;
  return innermost;
}

std::vector<Frame> Symbolizer::own_frames(const std::vector<uint64_t>& stack, size_t max) {
  resolve(stack);
  std::vector<Frame> own, all;
  for (uint64_t a : stack) {
    all.push_back(frame(a));
    const auto inlined = callers_.find(a);
    if (inlined != callers_.end()) all.insert(all.end(), inlined->second.begin(), inlined->second.end());
  }
  for (const Frame& f : all)
    if (f.own && own.size() < max) own.push_back(f);
  if (!own.empty()) return own;
  if (all.size() > max) all.resize(max);
  return all;
}

}  // namespace pmlab::crash::exec
