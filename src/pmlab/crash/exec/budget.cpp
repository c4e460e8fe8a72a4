// allocate_exec_budget: how crash exec splits its budget of states over a run's crash points.
#include <algorithm>
#include <map>
#include <numeric>

#include "pmlab/common/random.hpp"
#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/exec/campaign.hpp"

namespace pmlab::crash::exec {

std::vector<uint64_t> allocate_exec_budget(const std::vector<double>& sizes, const std::vector<uint32_t>& groups,
                                           uint64_t budget, uint64_t seed) {
  constexpr uint64_t kDeep = 16;  // states a deeply explored point gets: enough for its torn and deviating states
  uint64_t deep_total = 0;
  for (double s : sizes) deep_total += static_cast<uint64_t>(std::min<double>(s, kDeep));
  if (deep_total <= budget) return allocate_budget(sizes, budget);  // every point at least kDeep deep: as the simulator
  std::vector<uint64_t> out(sizes.size(), 0);
  auto give = [&](size_t i, uint64_t up_to, uint64_t& left) {
    const uint64_t want = std::min<uint64_t>(
        static_cast<uint64_t>(std::min<double>(sizes[i], static_cast<double>(up_to))), out[i] + left);
    if (want > out[i]) {
      left -= want - out[i];
      out[i] = want;
    }
  };
  // Half the budget in breadth: every point its first states (none, then all), or an even stride of the
  // points when there are more points than that half.
  uint64_t breadth = budget / 2;
  const uint64_t per_point = std::min<uint64_t>(2, breadth / std::max<size_t>(1, sizes.size()));
  if (per_point > 0) {
    for (size_t i = 0; i < sizes.size(); ++i) give(i, per_point, breadth);
  } else {
    const double stride = static_cast<double>(sizes.size()) / static_cast<double>(breadth);
    for (uint64_t k = 0; k < budget / 2; ++k) give(static_cast<size_t>(static_cast<double>(k) * stride), 1, breadth);
  }
  // The rest in depth, kDeep states a point: a program repeats its operations, so a bug at one kind of
  // fence recurs at many crash points and a sample of them finds it, where a shallow pass over every point
  // would never reach a state that needs a torn word. The sample takes every group (a fence's call stack)
  // once before any twice, in a seeded order, so a fence the program reaches rarely (a rehash among
  // inserts) is explored deep too.
  uint64_t depth = budget - std::accumulate(out.begin(), out.end(), uint64_t{0});
  Random random(mix64(seed ^ 0xdeeb5eedULL));
  auto shuffle = [&](auto& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[random.next_below(i)]);
  };
  std::map<uint32_t, std::vector<size_t>> by_group;
  for (size_t i = 0; i < sizes.size(); ++i) by_group[i < groups.size() ? groups[i] : 0].push_back(i);
  std::vector<std::vector<size_t>> members;
  for (auto& [group, points] : by_group) {
    shuffle(points);
    members.push_back(std::move(points));
  }
  shuffle(members);
  for (size_t round = 0; depth > 0; ++round) {
    bool any = false;
    for (const auto& points : members) {
      if (round >= points.size() || depth == 0) continue;
      any = true;
      give(points[round], kDeep, depth);
    }
    if (!any) break;
  }
  return out;
}

}  // namespace pmlab::crash::exec
