// What the self-test designs share: reproducible payload words and a checksum over words, so each design
// states its protocol and its recovery and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/crash/subject.hpp"

namespace pmlab::crash::selftest {

// Word k of the payload that operation `op` writes, for a stream seeded with `seed`.
inline uint64_t payload_word(uint64_t seed, uint64_t op, uint64_t k) noexcept {
  return mix64(seed * 0x100000001b3ULL + op * 0x9e3779b97f4a7c15ULL + k + 1);
}

// A checksum of `n` words that is never 0, so an all-zero (never written) record never validates.
inline uint64_t checksum_words(const uint64_t* words, size_t n) noexcept {
  uint64_t h = 0x5bd1e995ULL;
  for (size_t i = 0; i < n; ++i) h = mix64(h ^ words[i]) + i;
  return h | 1;
}

inline Status broken(const std::string& what) { return error(Errc::failed, what); }

inline const std::vector<persist::Domain> kBothDomains{persist::Domain::adr, persist::Domain::eadr};

// The registration of one variant of a self-test design: `Design` is made from `args...` and the options.
template <class Design, class... Args>
SubjectInfo variant(std::string name, std::string description, bool broken, std::vector<persist::Domain> domains,
                    Args... args) {
  SubjectInfo i;
  i.name = std::move(name);
  i.description = std::move(description);
  i.domains = std::move(domains);
  i.deliberately_broken = broken;
  i.make = [args...](const SubjectOptions& o) { return std::make_unique<Design>(args..., o); };
  return i;
}

}  // namespace pmlab::crash::selftest
