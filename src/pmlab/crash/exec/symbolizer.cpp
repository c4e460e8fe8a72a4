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
  static const char* const libraries[] = {"libpmem",  "libpmlab-trace", "libpmlab.so", "libc.so", "libc-",
                                          "ld-linux", "libstdc++",      "libgcc_s",    "libm.so", "libpthread",
                                          "libndctl", "libdaxctl",      "libdl."};
  return std::any_of(std::begin(libraries), std::end(libraries), [&](const char* l) { return name.rfind(l, 0) == 0; });
}

bool library_function(const std::string& function) { return function.rfind("pmlab::", 0) == 0; }

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
    spec.argv = {*addr2line, "-f", "-C", "-e", m->path};
    for (uint64_t a : list) {
      // A return address points after its call: the call's own line is one byte back.
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, a - m->bias - 1);
      spec.argv.push_back(buf);
    }
    spec.timeout_s = 30;
    auto run = platform::run_process(spec);
    if (!run || !run->ok()) continue;
    std::istringstream lines(run->out);
    for (uint64_t a : list) {
      std::string function, location;
      if (!std::getline(lines, function) || !std::getline(lines, location)) break;
      Frame& f = known_[a];
      // "file.c:42", "file.c:42 (discriminator 3)", or "??:0"/"??:?" without line information.
      if (const size_t d = location.find(" (discriminator"); d != std::string::npos) location.resize(d);
      const bool has_line = location.rfind("??", 0) != 0 && location.find(":?") == std::string::npos;
      if (has_line) f.location = std::filesystem::path(location).filename().string();
      // A stripped library names an address by the exported symbol before it, which is seldom the function
      // it is in: without a line, only the program's own frames and a module with its symbol table get one.
      if (function != "??" && (has_line || f.own || named)) f.function = function;
      if (library_function(f.function)) f.own = false;
    }
  }
}

Frame Symbolizer::frame(uint64_t address) {
  if (!known_.count(address)) resolve({address});
  return known_[address];
}

std::vector<Frame> Symbolizer::own_frames(const std::vector<uint64_t>& stack, size_t max) {
  resolve(stack);
  std::vector<Frame> own, all;
  for (uint64_t a : stack) {
    const Frame f = frame(a);
    all.push_back(f);
    if (f.own && own.size() < max) own.push_back(f);
  }
  if (!own.empty()) return own;
  if (all.size() > max) all.resize(max);
  return all;
}

}  // namespace pmlab::crash::exec
