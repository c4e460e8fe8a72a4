#include "pmlab/crash/exec/raw_instructions.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "pmlab/common/text.hpp"
#include "pmlab/crash/exec/disassembly_cache.hpp"
#include "pmlab/crash/exec/trace_format.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {

namespace fs = std::filesystem;

namespace {

// What moves data toward the durability domain or orders it: the line write-backs, the store fences, and
// the non-temporal stores (legacy, VEX and EVEX forms, as objdump spells them).
constexpr std::array kPersistenceMnemonics = {"clwb",     "clflushopt", "clflush",  "sfence",   "mfence",  "movnti",
                                              "movntiq",  "movntil",    "movntdq",  "movntps",  "movntpd", "movntq",
                                              "vmovntdq", "vmovntps",   "vmovntpd", "movdir64b"};
// Prefixes objdump may print before a mnemonic.
constexpr std::array kPrefixes = {"lock",   "rex", "rex.W", "rex.R",   "rex.B", "rex.X",  "data16",
                                  "addr32", "ds",  "cs",    "notrack", "bnd",   "{evex}", "{vex}"};

bool is_hex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// The next whitespace-separated word of `s`, removed from it.
std::string_view next_word(std::string_view& s) {
  s = trim(s);
  const size_t end = s.find_first_of(" \t");
  const std::string_view word = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return word;
}

// "0000000000001139 <main>:" -> (0x1139, "main")
bool symbol_line(std::string_view line, uint64_t* address, std::string* name) {
  const size_t open = line.find(" <");
  if (open == std::string_view::npos || line.size() < open + 4 || line.substr(line.size() - 2) != ">:") return false;
  const std::string_view hex = line.substr(0, open);
  if (!is_hex(hex)) return false;
  *address = std::strtoull(std::string(hex).c_str(), nullptr, 16);
  *name = std::string(line.substr(open + 2, line.size() - open - 4));
  if (const size_t version = name->find('@'); version != std::string::npos) name->resize(version);  // f@@V1.0
  return true;
}

// "    1151:\tclwb   (%rax)" or "    1151:\t66 0f ae 30 \tclwb   (%rax)" -> 0x1151, clwb, "(%rax)" and,
// in the second form, its bytes.
bool instruction_line(std::string_view line, uint64_t* address, RawInstruction* i) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view hex = trim(line.substr(0, colon));
  if (!is_hex(hex)) return false;
  *address = std::strtoull(std::string(hex).c_str(), nullptr, 16);
  std::string_view rest = line.substr(colon + 1);
  // With raw bytes, the instruction follows the last tab.
  if (const size_t tab = rest.rfind('\t'); tab != std::string_view::npos && tab > 0) {
    const std::string_view bytes = trim(rest.substr(0, tab));
    if (!bytes.empty() && std::all_of(bytes.begin(), bytes.end(), [](char c) {
          return c == ' ' || std::isxdigit(static_cast<unsigned char>(c));
        })) {
      rest = rest.substr(tab + 1);
      i->bytes.clear();
      for (std::string_view b = bytes; !b.empty();)
        i->bytes.push_back(static_cast<uint8_t>(std::strtoul(std::string(next_word(b)).c_str(), nullptr, 16)));
    }
  }
  std::string_view word = next_word(rest);
  while (std::find(kPrefixes.begin(), kPrefixes.end(), word) != kPrefixes.end()) word = next_word(rest);
  i->mnemonic = std::string(word);
  i->operands = std::string(trim(rest.substr(0, rest.find('#'))));
  return !i->mnemonic.empty();
}

}  // namespace

namespace {
// The first symbol that starts after `address`.
auto symbol_after(const std::vector<std::pair<uint64_t, std::string>>& symbols, uint64_t address) {
  return std::upper_bound(symbols.begin(), symbols.end(), address,
                          [](uint64_t a, const std::pair<uint64_t, std::string>& s) { return a < s.first; });
}
}  // namespace

std::string ModuleCode::symbol_at(uint64_t address) const {
  auto it = symbol_after(symbols, address);
  return it == symbols.begin() ? std::string() : std::prev(it)->second;
}

std::pair<uint64_t, uint64_t> ModuleCode::function_at(uint64_t address) const {
  auto it = symbol_after(symbols, address);
  return {it == symbols.begin() ? 0 : std::prev(it)->first, it == symbols.end() ? UINT64_MAX : it->first};
}

ModuleCode parse_disassembly(std::string_view text, std::string* kept) {
  ModuleCode code;
  std::string symbol;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    uint64_t address = 0;
    std::string word;
    RawInstruction i;
    if (symbol_line(line, &address, &word)) {
      symbol = word;
      code.symbols.emplace_back(address, word);
    } else if (instruction_line(line, &i.address, &i) &&
               std::find(kPersistenceMnemonics.begin(), kPersistenceMnemonics.end(), i.mnemonic) !=
                   kPersistenceMnemonics.end()) {
      i.symbol = symbol;
      code.instructions.push_back(std::move(i));
    } else {
      continue;
    }
    if (kept != nullptr) kept->append(line).push_back('\n');
  }
  std::sort(code.symbols.begin(), code.symbols.end());
  return code;
}

Result<ModuleCode> disassemble(const std::string& path) {
  const auto objdump = platform::find_program("objdump");
  if (!objdump) return Status(Errc::unsupported, "binutils' objdump is not installed");
  // An entry holds the lines kept for these mnemonics and prefixes: a pmlab that looks for others reads none.
  static const std::string kept_by = [] {
    std::string words;
    for (const char* w : kPersistenceMnemonics) words += std::string(w) + " ";
    for (const char* w : kPrefixes) words += std::string(w) + " ";
    return words;
  }();
  const std::string cached = disassembly_cache_file(cache_directory(), path, *objdump, kept_by);
  if (!cached.empty())
    if (auto kept = read_cached_disassembly(cached)) return parse_disassembly(*kept);
  platform::ProcessSpec spec;
  spec.argv = {*objdump, "-d", "-C", "-w", path};  // -w: every byte of an instruction on its line
  spec.timeout_s = 120;
  auto run = platform::run_process(spec);
  if (!run) return run.status();
  if (!run->ok()) return Status(Errc::failed, "objdump " + run->outcome() + ": " + platform::tail_lines(run->err, 2));
  std::string kept;
  ModuleCode code = parse_disassembly(run->out, &kept);
  if (!cached.empty() && write_cached_disassembly(cached, kept).ok())  // one not written costs only time
    (void)prune_disassembly_cache(cache_directory(), kDisassemblyCacheBytes, cached);
  return code;
}

namespace {

// The system's own libraries (OpenSSL's probes and bignum code hold clflush and movnti) and programs (an
// interpreter running the program's script) are not the program's code: its executable and libraries
// elsewhere are searched.
bool system_library(const std::string& path) {
  for (const char* dir : {"/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/bin/", "/sbin/",
                          "/usr/bin/", "/usr/sbin/", "/usr/libexec/"})
    if (path.rfind(dir, 0) == 0) return true;
  return false;
}

}  // namespace

bool own_code(const std::string& path) { return !library_module(path) && !system_library(path); }

std::vector<const TraceModule*> own_modules(const TraceFile& t) {
  std::vector<const TraceModule*> own;
  std::set<std::pair<std::string, uint64_t>> seen;  // a trace may list a module more than once
  for (const TraceModule& m : t.modules())
    if (own_code(m.path) && seen.emplace(m.path, m.bias).second) own.push_back(&m);
  return own;
}

void note_unreported_instructions(const TraceFile& t, Symbolizer& symbols, ModuleCodeCache& code,
                                  const std::set<std::pair<std::string, uint64_t>>& trapped,
                                  std::vector<std::string>& notes) {
  std::vector<uint64_t> sites;
  (void)t.replay([&](const TraceRecord& r) {
    if (r.kind == trace::Kind::writeback) sites.push_back(r.as<trace::WritebackRecord>().site);
    if (r.kind == trace::Kind::fence) sites.push_back(r.as<trace::FenceRecord>().site);
    return Status{};
  });
  constexpr size_t kNamed = 4;
  std::vector<std::string> named;
  size_t unnamed = 0;
  for (const TraceModule* own : own_modules(t)) {
    const TraceModule& m = *own;
    auto at = code.find(m.path);
    if (at == code.end()) at = code.emplace(m.path, disassemble(m.path)).first;
    if (!at->second) {
      notes.push_back(fs::path(m.path).filename().string() +
                      " was not searched for flush and fence instructions the runtime cannot see: " +
                      at->second.status().message());
      continue;
    }
    const ModuleCode& mc = *at->second;
    auto in_module = [&](uint64_t a) {
      return std::any_of(m.segments.begin(), m.segments.end(),
                         [&](const auto& s) { return a >= s.first && a < s.second; });
    };
    std::set<std::string> reported;  // sites are return addresses: the call lies one byte back
    for (uint64_t site : sites)
      if (site > m.bias && in_module(site)) reported.insert(mc.symbol_at(site - m.bias - 1));
    std::map<std::string, std::pair<std::set<std::string>, uint64_t>> unseen;  // symbol -> (mnemonics, first)
    for (const RawInstruction& i : mc.instructions) {
      // pmlab's Persister reports every instruction it issues, naming the design's call site: its own
      // functions have no reported site of their own.
      if (reported.count(i.symbol) || library_function(i.symbol) || trapped.count({m.path, i.address})) continue;
      auto& [mnemonics, first] = unseen.try_emplace(i.symbol, std::set<std::string>{}, i.address).first->second;
      mnemonics.insert(i.mnemonic);
    }
    for (const auto& [symbol, found] : unseen) {
      if (named.size() == kNamed) {
        ++unnamed;
        continue;
      }
      std::string text;
      for (const std::string& mnemonic : found.first) text += (text.empty() ? "" : ", ") + mnemonic;
      // frame() names return addresses (one byte back): one byte on names the instruction itself.
      const Frame frame = symbols.own_frame(found.second + m.bias + 1);
      named.push_back(text + " in " + (symbol.empty() ? std::string("?") : symbol) + " (" + frame.location + ")");
    }
  }
  if (named.empty()) return;
  std::string list;
  for (const std::string& n : named) list += (list.empty() ? "" : "; ") + n;
  if (unnamed) list += "; and in " + std::to_string(unnamed) + " more function(s)";
  notes.push_back(
      "the program's own code has flush, fence or non-temporal store instructions in functions that reported "
      "no write-back or fence to the runtime, which cannot see them: " +
      list +
      ". If they ran, what they wrote back counts here as never written back and their fences as absent, so "
      "failures may be false: report each through pmlab/trace.h (pmlab_flush, pmlab_fence, pmlab_nt_store)");
}

}  // namespace pmlab::crash::exec
