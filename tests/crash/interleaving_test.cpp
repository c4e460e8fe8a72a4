// The simulator's interleaving: one thread at a time, every thread runs to its end, and the same seed
// gives the same order.
#include "pmlab/crash/interleaving.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace pmlab::crash {
namespace {

std::string trace(uint64_t seed) {
  Interleaving il(seed);
  std::string order;  // written by whichever thread holds the turn: the turn is the only lock needed
  il.run(3, [&](unsigned t) {
    for (int i = 0; i < 20; ++i) {
      order += static_cast<char>('a' + t);
      il.point();
    }
  });
  return order;
}

TEST(Interleaving, ConcurrentThreadsTakeSeededTurnsAndEveryOneFinishes) {
  const std::string a = trace(7);
  EXPECT_EQ(a, trace(7));
  EXPECT_EQ(a.size(), 60u);
  for (char c : {'a', 'b', 'c'}) EXPECT_EQ(std::count(a.begin(), a.end(), c), 20);
  EXPECT_NE(a, trace(8));
  // Threads take turns, not one whole thread after another.
  EXPECT_NE(a, std::string(20, 'a') + std::string(20, 'b') + std::string(20, 'c'));
}

TEST(Interleaving, APointOutsideARunDoesNothing) {
  Interleaving il(1);
  il.point();
  EXPECT_EQ(Interleaving::current(), 0u);
  EXPECT_FALSE(il.running());
}

}  // namespace
}  // namespace pmlab::crash
