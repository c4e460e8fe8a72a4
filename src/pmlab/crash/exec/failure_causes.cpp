#include "pmlab/crash/exec/failure_causes.hpp"

#include <algorithm>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/crash/failure_groups.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {

namespace {

uint64_t hash_words(const std::vector<uint64_t>& words, uint64_t seed) {
  const uint64_t n = words.size();  // so that [a][b, c] and [a, b][c] differ
  return fnv1a64(words.data(), words.size() * sizeof(uint64_t), fnv1a64(&n, sizeof n, seed));
}

uint64_t hash_text(std::string_view text, uint64_t seed) {
  const uint64_t n = text.size();
  return fnv1a64(text.data(), text.size(), fnv1a64(&n, sizeof n, seed));
}

}  // namespace

uint64_t failure_cause(const FailureFacts& f) {
  static const std::vector<uint64_t> kNone;
  const uint64_t head[] = {f.at_exit ? 1U : 0U, f.call};
  uint64_t h = fnv1a64(head, sizeof head);
  h = hash_words(f.crash_stack != nullptr ? *f.crash_stack : kNone, h);
  std::vector<uint64_t> lines;
  for (const auto& [stored, written_back] : f.persisted)
    lines.push_back(fnv1a64(&written_back, sizeof written_back,
                            hash_words(stored != nullptr ? *stored : kNone, kFnvOffsetBasis64)));
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  h = hash_words(lines, h);
  h = hash_text(numbers_masked(f.lost), h);
  h = hash_text(f.outcome, h);
  // The checker's message is its last line: a Python checker's exception, a C checker's complaint.
  return hash_text(numbers_masked(trim(platform::tail_lines(std::string(f.output), 1))), h);
}

}  // namespace pmlab::crash::exec
