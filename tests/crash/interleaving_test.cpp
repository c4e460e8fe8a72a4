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

// Targeted preemption: the thread that made the hot call is parked at its depth-th handover point after
// it, and the other runs `hold` of its points before the parked one may run again.
TEST(Interleaving, AHotCallParksItsThreadWhileTheOtherRuns) {
  Interleaving il(3, /*switch_every=*/1000000);  // random switches practically never
  il.park_after(2, 5);
  std::string order;
  il.run(2, [&](unsigned t) {
    for (int i = 0; i < 12; ++i) {
      order += static_cast<char>('a' + t);
      if (t == 0 && i == 3) il.hot_call();
      il.point();
    }
  });
  // a's 4th step makes the call; at its 2nd point after it (after its 5th step) it is parked: b runs 5
  // points (then its 6th step, as the turn passes at its 5th), and a takes the turn back only when b
  // passes it or finishes.
  ASSERT_EQ(order.size(), 24u);
  EXPECT_EQ(order.substr(0, 5), "aaaaa");
  EXPECT_EQ(order.substr(5, 5), "bbbbb");
  EXPECT_EQ(std::count(order.begin(), order.end(), 'a'), 12);
}

// The other side of the race: after its hot call a thread keeps the turn for `hold` of its handover
// points, so the other stays where the call found it; then the seeded schedule goes on.
TEST(Interleaving, AHotCallCanLetItsThreadRunAlone) {
  Interleaving il(3, /*switch_every=*/1);  // without it, the turn passes at every point
  il.run_alone_after(4);
  std::string order;
  il.run(2, [&](unsigned t) {
    for (int i = 0; i < 8; ++i) {
      order += static_cast<char>('a' + t);
      if (t == 0 && i == 0) il.hot_call();
      il.point();
    }
  });
  // a's first step makes the call: its next 4 points keep the turn (steps 2 to 5), its 5th passes it.
  ASSERT_EQ(order.size(), 16u);
  EXPECT_EQ(order.substr(0, 6), "aaaaab");
  EXPECT_EQ(std::count(order.begin(), order.end(), 'a'), 8);
}

// A spin-wait passes the turn: a thread waiting for another one's progress cannot hold it forever.
TEST(Interleaving, AWaitPassesTheTurn) {
  Interleaving il(5, /*switch_every=*/1000000);
  bool ready = false;  // guarded by the turn
  int waits = 0;
  il.run(2, [&](unsigned t) {
    if (t == 0) {
      while (!ready) {
        ++waits;
        il.wait();
      }
    } else {
      ready = true;
    }
  });
  EXPECT_TRUE(ready);
  EXPECT_EQ(waits, 1);
}

TEST(Interleaving, APointOutsideARunDoesNothing) {
  Interleaving il(1);
  il.point();
  EXPECT_EQ(Interleaving::current(), 0u);
  EXPECT_FALSE(il.running());
}

}  // namespace
}  // namespace pmlab::crash
