#include "pmlab/crash/call_sites.hpp"

#include <cstring>

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

// "pmlab::primitives::Log::append(…)" -> "Log::append": the class and the method, without namespaces.
std::string short_function(std::string function) {
  function = function.substr(0, function.find('('));
  if (size_t space = function.rfind(' '); space != std::string::npos) function = function.substr(space + 1);
  if (size_t last = function.rfind("::"); last != std::string::npos && last > 0) {
    size_t before = function.rfind("::", last - 1);
    if (before != std::string::npos) function = function.substr(before + 2);
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

const char* to_string(Inert reason) noexcept {
  switch (reason) {
    case Inert::nothing_to_order: return "nothing_to_order";
    case Inert::nothing_to_write_back: return "nothing_to_write_back";
    case Inert::written_back_again: return "written_back_again";
    case Inert::below_2_32: return "below_2_32";
    case Inert::one_half: return "one_half";
    case Inert::volatile_word: return "volatile_word";
  }
  return "?";
}

const char* describe(Inert reason) noexcept {
  switch (reason) {
    case Inert::nothing_to_order: return "a fence with nothing to order";
    case Inert::nothing_to_write_back: return "a flush of lines with nothing pending";
    case Inert::written_back_again: return "a flush whose lines were written back again before the fence";
    case Inert::below_2_32: return "a store whose values stayed below 2^32";
    case Inert::one_half: return "a store that changed one half of the word";
    case Inert::volatile_word: return "a store to a word declared volatile";
  }
  return "?";
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
