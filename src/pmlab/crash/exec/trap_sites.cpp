#include "pmlab/crash/exec/trap_sites.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "pmlab/common/text.hpp"

namespace pmlab::crash::exec {

namespace fs = std::filesystem;
using traps::Register;
using traps::TrapKind;

namespace {

constexpr std::array<const char*, 17> kRegisterNames = {"%rax", "%rcx", "%rdx", "%rbx", "%rsp", "%rbp",
                                                        "%rsi", "%rdi", "%r8",  "%r9",  "%r10", "%r11",
                                                        "%r12", "%r13", "%r14", "%r15", "%rip"};

std::optional<Register> register_named(std::string_view name) {
  name = trim(name);
  if (name.empty()) return Register::none;
  for (size_t r = 0; r < kRegisterNames.size(); ++r)
    if (name == kRegisterNames[r]) return static_cast<Register>(r);
  return std::nullopt;  // a 32-bit or segment register
}

// The operands "SOURCE,DESTINATION" split at the comma outside parentheses.
std::pair<std::string_view, std::string_view> split_operands(std::string_view operands) {
  int depth = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == '(') ++depth;
    if (operands[i] == ')') --depth;
    if (operands[i] == ',' && depth == 0) return {trim(operands.substr(0, i)), trim(operands.substr(i + 1))};
  }
  return {trim(operands), {}};
}

// The bytes a non-temporal store of `source` (a register) writes: 0 where it is none the runtime knows.
uint32_t stored_bytes(std::string_view mnemonic, std::string_view source) {
  if (source.rfind("%zmm", 0) == 0) return 64;
  if (source.rfind("%ymm", 0) == 0) return 32;
  if (source.rfind("%xmm", 0) == 0) return 16;
  if (source.rfind("%mm", 0) == 0) return 8;
  if (mnemonic.rfind("movnti", 0) != 0 || source.size() < 3 || source[0] != '%') return 0;
  // movnti stores a general register: %rax, %r8 (8 bytes) or %eax, %r8d (4).
  return source[1] == 'e' || source.back() == 'd' ? 4 : 8;
}

std::optional<TrapKind> kind_of(std::string_view mnemonic) {
  if (mnemonic == "clflush") return TrapKind::clflush;
  if (mnemonic == "clflushopt") return TrapKind::clflushopt;
  if (mnemonic == "clwb") return TrapKind::clwb;
  if (mnemonic == "sfence") return TrapKind::sfence;
  if (mnemonic == "mfence") return TrapKind::mfence;
  if (mnemonic.find("movnt") != std::string_view::npos) return TrapKind::non_temporal_store;
  return std::nullopt;  // movdir64b: its destination is a register
}

}  // namespace

std::optional<MemoryOperand> parse_memory_operand(std::string_view text) {
  text = trim(text);
  const size_t open = text.find('(');
  if (text.empty() || open == std::string_view::npos || text.back() != ')' || text.find(':') != std::string_view::npos)
    return std::nullopt;
  MemoryOperand m;
  if (open > 0) {
    const std::string disp(text.substr(0, open));
    char* end = nullptr;
    m.displacement = static_cast<int64_t>(std::strtoll(disp.c_str(), &end, 0));
    if (end != disp.c_str() + disp.size()) return std::nullopt;
  }
  std::string_view inside = text.substr(open + 1, text.size() - open - 2);
  std::array<std::string_view, 3> parts{};
  size_t n = 0;
  for (; n < parts.size() && !inside.empty(); ++n) {
    const size_t comma = inside.find(',');
    parts[n] = inside.substr(0, comma);
    inside.remove_prefix(comma == std::string_view::npos ? inside.size() : comma + 1);
  }
  if (!inside.empty()) return std::nullopt;
  const auto base = register_named(parts[0]);
  const auto index = register_named(parts[1]);
  if (!base || !index || *index == Register::rip || *index == Register::rsp) return std::nullopt;
  m.base = *base;
  m.index = *index;
  if (n == 3) {
    const std::string scale(trim(parts[2]));
    if (scale != "1" && scale != "2" && scale != "4" && scale != "8") return std::nullopt;
    m.scale = static_cast<uint8_t>(scale[0] - '0');
  }
  if (m.base == Register::none && m.index == Register::none) return std::nullopt;
  if (m.base == Register::rip && m.index != Register::none) return std::nullopt;
  return m;
}

Result<TrapSite> trap_site(const RawInstruction& i) {
  const auto kind = kind_of(i.mnemonic);
  if (!kind) return error(Errc::unsupported, i.mnemonic + " stores to the address in a register operand");
  if (i.bytes.empty() || i.bytes.size() > traps::kMaxInstructionBytes)
    return error(Errc::unsupported, "objdump did not print its bytes");
  TrapSite s{i.address, *kind, {}, 0, i.bytes};
  if (*kind == TrapKind::sfence || *kind == TrapKind::mfence) return s;
  const auto [first, second] = split_operands(i.operands);
  const std::string_view memory = *kind == TrapKind::non_temporal_store ? second : first;
  const auto operand = parse_memory_operand(memory);
  if (!operand)
    return error(Errc::unsupported, "its address " + std::string(memory) + " is not one the runtime computes");
  s.operand = *operand;
  if (*kind != TrapKind::non_temporal_store) return s;
  if (operand->base == Register::rip) return error(Errc::unsupported, "a non-temporal store relative to rip");
  s.size = stored_bytes(i.mnemonic, first);
  if (s.size == 0) return error(Errc::unsupported, "its source " + std::string(first) + " is of no known width");
  return s;
}

namespace {

// The traps of one module's code: per function, all of its persistence instructions or none.
ModuleTraps traps_of(const std::string& path, const ModuleCode& mc, std::vector<std::string>& untrapped) {
  ModuleTraps m{path, {}, {}};
  // By the function's range ([begin, end): from its symbol to the next), not its name: two static functions
  // of one name in two files are two functions.
  using Range = std::pair<uint64_t, uint64_t>;
  std::map<Range, std::vector<TrapSite>> by_function;
  std::map<Range, std::string> why_not;  // the function's name and the instruction that cannot be trapped
  for (const RawInstruction& i : mc.instructions) {
    if (library_function(i.symbol)) continue;
    const Range function = mc.function_at(i.address);
    if (why_not.count(function)) continue;
    auto site = trap_site(i);
    if (!site) {
      why_not[function] = (i.symbol.empty() ? std::string("?") : i.symbol) + " in " +
                          fs::path(path).filename().string() + " (" + i.mnemonic + " " + i.operands + ": " +
                          site.status().message() + ")";
      by_function.erase(function);
      continue;
    }
    by_function[function].push_back(std::move(*site));
  }
  for (auto& [function, sites] : by_function) {
    m.functions.push_back(function);
    for (TrapSite& s : sites) m.sites.push_back(std::move(s));
  }
  for (const auto& [function, why] : why_not) untrapped.push_back(why);
  std::sort(m.sites.begin(), m.sites.end(), [](const TrapSite& a, const TrapSite& b) { return a.address < b.address; });
  return m;
}

}  // namespace

std::vector<ModuleTraps> own_traps(const std::vector<std::string>& paths, ModuleCodeCache& code,
                                   std::vector<std::string>& notes) {
  std::vector<ModuleTraps> modules;
  std::vector<std::string> untrapped;
  for (const std::string& path : paths) {
    auto at = code.find(path);
    if (at == code.end()) at = code.emplace(path, disassemble(path)).first;
    if (!at->second) {
      notes.push_back(fs::path(path).filename().string() +
                      " was not searched for flush and fence instructions to trap: " + at->second.status().message());
      continue;
    }
    if (at->second->instructions.empty()) continue;
    ModuleTraps traps = traps_of(path, *at->second, untrapped);
    if (!traps.sites.empty()) modules.push_back(std::move(traps));
  }
  if (!untrapped.empty()) {
    std::string list;
    for (const std::string& u : untrapped) list += (list.empty() ? "" : "; ") + u;
    notes.push_back(
        "these functions' own flush, fence or non-temporal store instructions are not trapped, since "
        "one of them cannot be: " +
        list + ". Report them through pmlab/trace.h");
  }
  return modules;
}

Status write_trap_sites(const std::vector<ModuleTraps>& modules, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  out << traps::kHeader << "\n";
  for (const ModuleTraps& m : modules) {
    out << "module " << m.path << "\n";
    for (const auto& [begin, end] : m.functions)
      out << "function " << std::hex << begin << " " << end << std::dec << "\n";
    for (const TrapSite& s : m.sites) {
      out << "site " << std::hex << s.address << std::dec << " " << static_cast<int>(s.kind) << " "
          << static_cast<int>(s.operand.base) << " " << static_cast<int>(s.operand.index) << " "
          << static_cast<int>(s.operand.scale) << " " << s.operand.displacement << " " << s.size << " ";
      for (uint8_t b : s.bytes) {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", b);
        out << hex;
      }
      out << "\n";
    }
  }
  out.close();
  if (!out) return error(Errc::io_error, "cannot write the trap sites to " + path);
  return {};
}

std::set<std::pair<std::string, uint64_t>> trapped_addresses(const std::vector<ModuleTraps>& modules) {
  std::set<std::pair<std::string, uint64_t>> out;
  for (const ModuleTraps& m : modules)
    for (const TrapSite& s : m.sites) out.emplace(m.path, s.address);
  return out;
}

}  // namespace pmlab::crash::exec
