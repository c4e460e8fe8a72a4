#include "pmlab/profile/stacks.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "pmlab/common/text.hpp"

namespace pmlab::profile {
namespace {

bool parse_u64(std::string_view s, int base, uint64_t& out) {
  if (s.empty()) return false;
  std::string text(s);
  char* end = nullptr;
  out = std::strtoull(text.c_str(), &end, base);
  return end == text.c_str() + text.size();
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

// Drops argument lists ("(…)", kept empty after "operator") and "(anonymous namespace)::" from a
// demangled name, so frames read as the designs are named.
std::string simplify(std::string name) {
  const std::string anon = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anon)) != std::string::npos;) name.erase(at, anon.size());
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '(') {
      if (depth == 0 && out.ends_with("operator")) out += "()";
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  while (out.ends_with(" const")) out.resize(out.size() - 6);
  // std:: plumbing wrapped around pmlab's code (std::function handlers, std::thread states): name the
  // wrapped pmlab callable, e.g. "pmlab::suites::core::body::{lambda#1}".
  if (out.starts_with("std::")) {
    size_t at = out.find("pmlab::");
    if (at != std::string::npos) {
      size_t end = at;
      int d = 0;
      for (; end < out.size(); ++end) {
        char c = out[end];
        if (c == '<' || c == '{') ++d;
        else if ((c == '}') && d > 0) --d;
        else if (c == '>' && d > 0) --d;
        else if ((c == '>' || c == ',') && d == 0) break;
      }
      std::string inner = out.substr(at, end - at);
      while (!inner.empty() && inner.back() == ' ') inner.pop_back();
      return inner;
    }
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Name segments split at "::", template arguments left attached to their segment.
std::vector<std::string> segments(std::string_view name) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<' || c == '(' || c == '{') ++depth;
    else if ((c == '>' || c == ')' || c == '}') && depth > 0) --depth;
    else if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      out.push_back(lower(name.substr(start, i - start)));
      start = i + 2;
      ++i;
    }
  }
  out.push_back(lower(name.substr(start)));
  return out;
}

bool is_pmlab(std::string_view display) { return display.starts_with("pmlab::"); }

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

}  // namespace

const char* to_string(Activity a) noexcept {
  switch (a) {
    case Activity::persistence: return "persistence";
    case Activity::logging: return "logging";
    case Activity::allocation: return "allocation";
    case Activity::search: return "search";
    case Activity::other: return "other";
  }
  return "other";
}

Result<std::vector<Sample>> parse_perf_script(std::string_view text) {
  std::vector<Sample> samples;
  Sample* current = nullptr;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (trim(line).empty()) {
      current = nullptr;
      continue;
    }
    auto bad = [&](const char* what) {
      return error(Errc::invalid_argument,
                   "perf script line " + std::to_string(line_no) + ": " + what + ": '" + std::string(trim(line)) + "'");
    };
    if (line.front() != '\t') {
      // Header: "<tid> <period>" (with -F tid,period the fields are separated by spaces).
      std::string_view rest = trim(line);
      if (!rest.empty() && rest.back() == ':') rest.remove_suffix(1);
      size_t space = rest.find_first_of(" \t");
      if (space == std::string_view::npos) return bad("sample header needs a thread id and a period");
      uint64_t tid = 0, period = 0;
      if (!parse_u64(rest.substr(0, space), 10, tid) || !parse_u64(trim(rest.substr(space)), 10, period))
        return bad("sample header needs a thread id and a period");
      samples.push_back({static_cast<int>(tid), period, {}});
      current = &samples.back();
      continue;
    }
    if (current == nullptr) return bad("stack frame without a sample header");
    // Frame: "\t<hex ip> <symbol>[+0x<off>] (<dso>)"; the symbol may contain spaces, the dso is last.
    std::string_view body = trim(line);
    size_t open = body.rfind(" (");
    if (open == std::string_view::npos || body.back() != ')') return bad("stack frame needs '(dso)' at its end");
    Frame f;
    f.dso = std::string(body.substr(open + 2, body.size() - open - 3));
    std::string_view head = trim(body.substr(0, open));
    size_t space = head.find(' ');
    uint64_t ip = 0;
    if (space == std::string_view::npos || !parse_u64(head.substr(0, space), 16, ip))
      return bad("stack frame needs an address");
    std::string_view sym = trim(head.substr(space + 1));
    size_t plus = sym.rfind("+0x");
    if (plus != std::string_view::npos && parse_u64(sym.substr(plus + 3), 16, f.offset)) sym = sym.substr(0, plus);
    f.symbol = std::string(sym);
    current->frames.push_back(std::move(f));
  }
  return samples;
}

std::string display_name(const Frame& f) {
  if (f.symbol.empty() || f.symbol == "[unknown]") {
    std::string file = std::filesystem::path(f.dso).filename().string();
    if (file.empty() || file.front() == '[') return file.empty() ? "[unknown]" : file;  // "[unknown]", "[vdso]"
    return "[" + file + "]";
  }
  return simplify(demangle(f.symbol));
}

std::map<std::string, uint64_t> fold(const std::vector<Sample>& samples) {
  std::map<std::string, uint64_t> folded;
  for (const Sample& s : samples) {
    std::vector<std::string> names;
    names.reserve(s.frames.size());
    for (const Frame& f : s.frames) names.push_back(display_name(f));
    // Root side first; skip the entry plumbing above pmlab's outermost frame (all kept when none is pmlab's).
    size_t root = names.size();
    for (size_t i = names.size(); i-- > 0;)
      if (is_pmlab(names[i])) {
        root = i + 1;
        break;
      }
    std::string stack;
    for (size_t i = root; i-- > 0;) {
      std::string n = names[i];
      std::replace(n.begin(), n.end(), ';', ':');  // ';' separates frames
      if (!stack.empty()) stack += ';';
      stack += n;
    }
    if (stack.empty()) stack = "[no stack]";
    folded[stack] += s.period;
  }
  return folded;
}

Activity classify_name(std::string_view display) {
  const std::string name(display);
  static const char* const kAllocators[] = {"malloc", "calloc",         "realloc",       "free",
                                            "cfree",  "posix_memalign", "aligned_alloc", "mmap",
                                            "mmap64", "munmap",         "_int_malloc",   "_int_free"};
  if (name.starts_with("pmlab::persist::") || name.starts_with("pmem2_")) return Activity::persistence;
  for (const char* a : kAllocators)
    if (name == a) return Activity::allocation;
  if (name.starts_with("operator new") || name.starts_with("operator delete")) return Activity::allocation;
  if (!is_pmlab(name)) return Activity::other;
  const auto segs = segments(name);
  for (const auto& s : segs)
    if (s.find("alloc") != std::string::npos) return Activity::allocation;
  for (const auto& s : segs)
    if (s == "log" || ends_with(s, "log") || s.starts_with("log_") || s.find("_log") != std::string::npos)
      return Activity::logging;
  static const char* const kSearch[] = {"search", "find", "lookup", "travers", "scan", "seek", "walk", "probe"};
  for (const auto& s : segs)
    for (const char* k : kSearch)
      if (s.find(k) != std::string::npos) return Activity::search;
  return Activity::other;
}

bool PersistSites::contains(const Frame& f) const {
  if (keys.empty()) return false;
  return keys.count(f.symbol + "+" + std::to_string(f.offset)) > 0;
}

PersistSites parse_objdump(std::string_view text) {
  static const char* const kMnemonics[] = {"clwb",    "clflushopt", "clflush", "sfence",   "mfence",  "movnti",
                                           "movntdq", "vmovntdq",   "movntps", "vmovntps", "movntpd", "vmovntpd"};
  PersistSites sites;
  std::string symbol;
  uint64_t symbol_addr = 0;
  int skid_left = 0;  // instructions after the last persistence instruction still inside its skid window
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    // "0000000000012340 <symbol>:" starts a function.
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line.front())) && line.ends_with(">:")) {
      size_t lt = line.find(" <");
      if (lt == std::string_view::npos || !parse_u64(line.substr(0, lt), 16, symbol_addr)) continue;
      symbol = std::string(line.substr(lt + 2, line.size() - lt - 4));
      skid_left = 0;
      continue;
    }
    // "   12345:\tclwb   (%rax)"
    size_t colon = line.find(":\t");
    if (symbol.empty() || colon == std::string_view::npos) continue;
    uint64_t addr = 0;
    if (!parse_u64(trim(line.substr(0, colon)), 16, addr) || addr < symbol_addr) continue;
    std::string_view insn = trim(line.substr(colon + 2));
    std::string_view mnemonic = insn.substr(0, insn.find_first_of(" \t"));
    const std::string key = symbol + "+" + std::to_string(addr - symbol_addr);
    const bool persist = std::find(std::begin(kMnemonics), std::end(kMnemonics), mnemonic) != std::end(kMnemonics);
    if (persist || skid_left > 0) sites.keys.insert(key);
    const bool transfer = mnemonic.starts_with('j') || mnemonic.starts_with("call") || mnemonic.starts_with("ret");
    if (persist) skid_left = kPersistSkid;
    else if (transfer) skid_left = 0;
    else if (skid_left > 0) --skid_left;
  }
  return sites;
}

Activity classify(const Sample& s, const PersistSites& sites) {
  if (!s.frames.empty() && sites.contains(s.frames.front())) return Activity::persistence;
  for (const Frame& f : s.frames) {
    Activity a = classify_name(display_name(f));
    if (a != Activity::other) return a;
  }
  return Activity::other;
}

Breakdown breakdown(const std::vector<Sample>& samples, const PersistSites& sites) {
  Breakdown b;
  for (const Sample& s : samples) {
    ++b.samples;
    b.total_period += s.period;
    b.period[static_cast<int>(classify(s, sites))] += s.period;
  }
  return b;
}

}  // namespace pmlab::profile
