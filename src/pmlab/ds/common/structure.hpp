// What the bench and the crash tests ask of every structure, as a concept (no virtual call per operation:
// runtime -> template dispatch happens once, in the bench's factory).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/common/options.hpp"

namespace pmlab::ds {

template <class S>
concept Structure = requires(S s, const S cs, uint64_t key, uint64_t record, const std::byte* in, std::byte* out,
                             uint32_t n, const Options& o) {
  { S::kName } -> std::convertible_to<std::string_view>;
  { S::bytes_needed(o) } -> std::convertible_to<uint64_t>;
  { s.create(record) } -> std::same_as<Status>;   // empty structure for `record` records
  { s.recover() } -> std::same_as<Status>;        // reopen after a crash (rebuild volatile parts)
  { s.insert(key, record, in) } -> std::same_as<bool>;  // upsert; false: out of space
  { s.update(key, record, in) } -> std::same_as<bool>;  // false: no such key
  { s.read(key, record, out) } -> std::same_as<bool>;   // false: no such key
  { s.scan(key, record, n, out) } -> std::same_as<uint32_t>;  // records visited from `key` on
  { cs.count() } -> std::same_as<uint64_t>;
  { cs.check() } -> std::same_as<Status>;         // structural invariants
};

}  // namespace pmlab::ds
