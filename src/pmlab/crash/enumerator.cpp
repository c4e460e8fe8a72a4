#include "pmlab/crash/enumerator.hpp"

#include <cstring>
#include <set>

#include "pmlab/bench/access_pattern.hpp"

namespace pmlab::crash {
namespace {

uint64_t word_term(uint64_t index, uint64_t value) {
  uint64_t s = value ^ (index * 0x9e3779b97f4a7c15ULL);
  return bench::splitmix64(s);
}

uint64_t load_word(const std::byte* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}

class Collector {
 public:
  Collector(size_t units, uint64_t budget) : units_(units), budget_(budget) {}
  bool full() const { return out_.size() >= budget_; }
  void add(std::vector<uint8_t> choice, const char* strategy) {
    if (full() || !seen_.insert(choice).second) return;
    out_.push_back({std::move(choice), strategy});
  }
  std::vector<CrashState> take() { return std::move(out_); }
  size_t units() const { return units_; }

 private:
  size_t units_;
  uint64_t budget_;
  std::set<std::vector<uint8_t>> seen_;
  std::vector<CrashState> out_;
};

// Every way to change `depth` units of `base`, each to another of its options, in lexicographic order.
void deviations(const std::vector<PendingUnit>& units, const std::vector<uint8_t>& base, int depth, size_t start,
                std::vector<uint8_t>& current, Collector& c) {
  if (c.full()) return;
  if (depth == 0) {
    c.add(current, "deviation");
    return;
  }
  for (size_t i = start; i < units.size() && !c.full(); ++i) {
    const uint8_t options = static_cast<uint8_t>(units[i].candidates.size() + 1);
    for (uint8_t v = 0; v < options; ++v) {
      if (v == base[i]) continue;
      current[i] = v;
      deviations(units, base, depth - 1, i + 1, current, c);
      current[i] = base[i];
    }
  }
}

}  // namespace

std::vector<CrashState> enumerate_states(const std::vector<PendingUnit>& units, const EnumerationLimits& limits) {
  const size_t n = units.size();
  Collector c(n, limits.budget);
  std::vector<uint8_t> none(n, 0), all(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<uint8_t>(units[i].candidates.size());
  c.add(none, "none");
  c.add(all, "all");

  // Exhaustive when the product of options is small.
  uint64_t total = 1;
  for (const auto& u : units) {
    total *= u.candidates.size() + 1;
    if (total > limits.exhaustive_limit) break;
  }
  if (total <= limits.exhaustive_limit) {
    std::vector<uint8_t> cur(n, 0);
    while (!c.full()) {
      c.add(cur, "exhaustive");
      size_t i = 0;
      while (i < n) {
        if (++cur[i] <= units[i].candidates.size()) break;
        cur[i] = 0;
        ++i;
      }
      if (i == n) break;
    }
    return c.take();
  }

  // Accumulative: the first k units at their latest content.
  for (size_t k = 1; k < n && !c.full(); ++k) {
    std::vector<uint8_t> cur(n, 0);
    for (size_t i = 0; i < k; ++i) cur[i] = all[i];
    c.add(cur, "prefix");
  }
  for (int d = 1; d <= limits.max_deviation && !c.full(); ++d) {
    std::vector<uint8_t> cur = none;
    deviations(units, none, d, 0, cur, c);
    cur = all;
    deviations(units, all, d, 0, cur, c);
  }
  uint64_t state = limits.seed;
  for (uint64_t attempts = 0; !c.full() && attempts < 4 * limits.budget; ++attempts) {
    std::vector<uint8_t> cur(n);
    for (size_t i = 0; i < n; ++i) cur[i] = static_cast<uint8_t>(bench::splitmix64(state) % (units[i].candidates.size() + 1));
    c.add(cur, "random");
  }
  return c.take();
}

void build_image(const std::vector<std::byte>& durable, const std::vector<PendingUnit>& units, const CrashState& state,
                 std::byte* out) {
  std::memcpy(out, durable.data(), durable.size());
  for (size_t i = 0; i < units.size(); ++i)
    if (state.choice[i] != 0) std::memcpy(out + units[i].offset, units[i].candidates[state.choice[i] - 1].data(), units[i].size);
}

uint64_t image_hash(const std::vector<std::byte>& durable) {
  uint64_t h = 0;
  for (size_t off = 0; off < durable.size(); off += 8)
    h += word_term(off / 8, load_word(durable.data() + off, std::min<size_t>(8, durable.size() - off)));
  return h;
}

uint64_t state_hash(uint64_t durable_hash, const std::vector<std::byte>& durable, const std::vector<PendingUnit>& units,
                    const CrashState& state) {
  uint64_t h = durable_hash;
  for (size_t i = 0; i < units.size(); ++i) {
    if (state.choice[i] == 0) continue;
    const auto& content = units[i].candidates[state.choice[i] - 1];
    for (size_t w = 0; w < units[i].size; w += 8) {
      const size_t off = units[i].offset + w;
      const size_t n = std::min<size_t>(8, units[i].size - w);
      h -= word_term(off / 8, load_word(durable.data() + off, n));
      h += word_term(off / 8, load_word(content.data() + w, n));
    }
  }
  return h;
}

std::string describe(const std::vector<PendingUnit>& units, const CrashState& state) {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < units.size(); ++i) {
    if (state.choice[i] == 0) continue;
    const bool latest = state.choice[i] == units[i].candidates.size();
    std::snprintf(buf, sizeof buf, "%s0x%zx+%zu (%s)", out.empty() ? "" : ", ", units[i].offset, units[i].size,
                  latest ? "latest" : "written back");
    out += buf;
  }
  return out.empty() ? "nothing beyond the durable image" : out;
}

}  // namespace pmlab::crash
