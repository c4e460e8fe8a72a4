#include "pmlab/crash/call_sites.hpp"

#include <cstring>
#include <iterator>

#ifndef PMLAB_SOURCE_DIR
#define PMLAB_SOURCE_DIR ""
#endif

namespace pmlab::crash {
namespace {

std::string relative(std::string file) {
  const std::string root = std::string(PMLAB_SOURCE_DIR) + "/";
  if (root.size() > 1 && file.rfind(root, 0) == 0) file = file.substr(root.size());
  return file;
}

// "pmlab::primitives::Log::append(…)" -> "Log::append": the class and the method, without namespaces or
// return type. Template arguments may hold "::" and spaces ("LinkedList<ListDesign::tlog>", for a call in
// a lambda), so only separators outside angle brackets count.
std::string short_function(const std::string& function) {
  int depth = 0;
  size_t start = 0, last = std::string::npos, before = std::string::npos;
  for (size_t i = 0; i < function.size(); ++i) {
    const char c = function[i];
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    if (depth > 0) continue;
    if (c == '(') {
      const size_t from = before == std::string::npos ? start : before + 2;
      return function.substr(from, i - from);
    }
    if (c == ' ') {
      start = i + 1;
      last = before = std::string::npos;
    } else if (c == ':' && i + 1 < function.size() && function[i + 1] == ':') {
      before = last;
      last = i;
      ++i;
    }
  }
  return function;
}

}  // namespace

std::string site_position(const std::string& file, uint32_t line, uint32_t column) {
  return relative(file) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string site_of(const std::source_location& where) {
  return relative(where.file_name()) + ":" + std::to_string(where.line()) + " (" +
         short_function(where.function_name()) + ")";
}

std::string Mutant::describe() const {
  const char* what = "";
  switch (site.call) {
    case persist::Call::flush: what = "flush dropped"; break;
    case persist::Call::fence: what = "fence dropped"; break;
    case persist::Call::nt_store: what = "non-temporal store made a cached store, never written back"; break;
    case persist::Call::atomic_store: what = "8-byte atomic store made two plain 4-byte stores"; break;
    case persist::Call::atomic_rmw: what = "read-modify-write"; break;
  }
  return std::string(what) + " at " + site_position(site.file, site.line, site.column) + " (" + function + ")";
}

std::vector<persist::Mutation> mutations_of(persist::Call call) {
  switch (call) {
    case persist::Call::flush:
    case persist::Call::fence:
    case persist::Call::nt_store: return {persist::Mutation::drop};
    case persist::Call::atomic_store: return {persist::Mutation::split};
    case persist::Call::atomic_rmw: return {};
  }
  return {};
}

namespace {
// Each reason's name in results and its description in sentences, one row a reason.
struct InertText {
  Inert reason;
  const char* name;
  const char* description;
};
constexpr InertText kInertTexts[] = {
    {Inert::nothing_to_order, "nothing_to_order", "a fence with nothing to order"},
    {Inert::nothing_to_write_back, "nothing_to_write_back", "a flush of lines with nothing pending"},
    {Inert::written_back_again, "written_back_again", "a flush whose lines were written back again before the fence"},
    {Inert::below_2_32, "below_2_32", "a store whose values stayed below 2^32"},
    {Inert::one_half, "one_half", "a store that changed one half of the word"},
    {Inert::volatile_word, "volatile_word", "a store to a word declared volatile"},
};
static_assert(std::size(kInertTexts) == kInertKinds);
const InertText* text_of(Inert reason) noexcept {
  for (const InertText& t : kInertTexts)
    if (t.reason == reason) return &t;
  return nullptr;
}
}  // namespace

const char* to_string(Inert reason) noexcept {
  const InertText* t = text_of(reason);
  return t != nullptr ? t->name : "?";
}

const char* describe(Inert reason) noexcept {
  const InertText* t = text_of(reason);
  return t != nullptr ? t->description : "?";
}

bool is_redundant_call(Inert reason) noexcept {
  return reason == Inert::nothing_to_order || reason == Inert::nothing_to_write_back ||
         reason == Inert::written_back_again;
}

persist::Mutation CallSites::on_call(persist::Call call, const std::source_location& where) noexcept {
  if (recording_) {
    SiteKey key{call, where.file_name(), where.line(), where.column()};
    if (!seen_.contains(key)) seen_.emplace(std::move(key), short_function(where.function_name()));
  }
  if (!mutant_ || mutant_->site.call != call || mutant_->site.line != where.line() ||
      mutant_->site.column != where.column() || mutant_->site.file != where.file_name())
    return persist::Mutation::none;
  ++mutated_calls_;
  return mutant_->mutation;
}

}  // namespace pmlab::crash
