// pmlab::Tree as a user sees it: random operations against std::map across clean closes, a process
// killed mid-stream, threads sharing one tree, a pool that fills, and bad keys, sizes and pools.
#include <pmlab/log.hpp>
#include <pmlab/pmlab.h>
#include <pmlab/tree.hpp>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/api_error.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

constexpr unsigned kValueBytes = 24;

// A key of `bytes` bytes, big-endian: keys sort as their numbers.
std::string key_of(uint64_t n, unsigned bytes = 8) {
  std::string k(bytes, '\0');
  for (size_t i = bytes; i-- > 0; n >>= 8) k[i] = static_cast<char>(n & 0xff);
  return k;
}
std::string value_of(uint64_t key, uint64_t version) {
  std::string v(kValueBytes, '\0');
  for (unsigned i = 0; i < kValueBytes; ++i) v[i] = static_cast<char>(key * 7 + version * 131 + i);
  return v;
}

pmlab::TreeOptions options(unsigned key_bytes = 8) {
  pmlab::TreeOptions o;
  o.key_bytes = key_bytes;
  o.value_bytes = kValueBytes;
  return o;
}

// The tree holds exactly `model` (key number -> value), in key order.
void expect_holds(const pmlab::Tree& tree, const std::map<uint64_t, std::string>& model, unsigned key_bytes = 8) {
  std::string got(kValueBytes, '\0');
  for (const auto& [k, v] : model) {
    ASSERT_TRUE(tree.get(key_of(k, key_bytes), got.data())) << k;
    ASSERT_EQ(got, v) << k;
  }
  std::vector<uint64_t> scanned;
  tree.scan("", UINT64_MAX, [&](std::string_view key, const void* value) {
    uint64_t n = 0;
    for (const char c : key) n = n << 8 | static_cast<unsigned char>(c);
    scanned.push_back(n);
    EXPECT_EQ(std::memcmp(value, model.at(n).data(), kValueBytes), 0) << n;
  });
  std::vector<uint64_t> keys;
  for (const auto& [k, v] : model) keys.push_back(k);
  ASSERT_EQ(scanned, keys);
  ASSERT_EQ(tree.stats().keys, model.size());
  tree.check();
}

TEST(TreeApi, MatchesAMapAcrossCleanCloses) {
  TempDir dir;
  std::map<uint64_t, std::string> model;
  std::mt19937_64 rng(7);
  {
    auto tree = pmlab::Tree::create(dir.file("tree"), 16 << 20, options(3));
    EXPECT_FALSE(tree.stats().index_rebuilt);
    for (uint64_t i = 0; i < 20000; ++i) {
      const uint64_t k = rng() % 6000;
      const std::string key = key_of(k, 3);
      switch (rng() % 4) {
        case 0:
        case 1:
          tree.put(key, value_of(k, i).data());
          model[k] = value_of(k, i);
          break;
        case 2:
          ASSERT_EQ(tree.update(key, value_of(k, i).data()), model.count(k) == 1) << k;
          if (model.count(k) == 1) model[k] = value_of(k, i);
          break;
        default: ASSERT_EQ(tree.remove(key), model.erase(k) == 1) << k;
      }
    }
    expect_holds(tree, model, 3);
  }
  auto tree = pmlab::Tree::open(dir.file("tree"));
  EXPECT_FALSE(tree.stats().index_rebuilt) << "a clean close leaves an index the open keeps";
  EXPECT_EQ(tree.options().key_bytes, 3u);
  expect_holds(tree, model, 3);
  // Scans from keys shorter and longer than the tree's, and with a limit.
  std::vector<std::string> seen;
  const auto collect = [&](std::string_view key, const void*) { seen.emplace_back(key); };
  const uint64_t first = model.lower_bound(0x0100)->first;
  EXPECT_EQ(tree.scan(std::string("\x00\x01", 2), 1, collect), 1u);
  EXPECT_EQ(seen.back(), key_of(first, 3));
  const uint64_t after = model.upper_bound(0x0100)->first;
  EXPECT_EQ(tree.scan(std::string("\x00\x01\x00\x01", 4), 1, collect), 1u);
  EXPECT_EQ(seen.back(), key_of(after, 3));
  EXPECT_EQ(tree.scan(std::string("\xff\xff\xff\x01", 4), 5, collect), 0u);
}

// A child puts keys and reports each one whose put returned; killed mid-stream, the open finds every
// reported key with its value, and the one in flight whole or absent.
TEST(TreeApi, AKilledProcessLosesNoReturnedPut) {
  TempDir dir;
  pmlab::Tree::create(dir.file("tree"), 64 << 20, options());
  auto* done = static_cast<std::atomic<uint64_t>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(done, MAP_FAILED);
  new (done) std::atomic<uint64_t>(0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto tree = pmlab::Tree::open(dir.file("tree"));
    for (uint64_t i = 1;; ++i) {
      const uint64_t k = i * 0x9E3779B97F4A7C15ull;
      tree.put(key_of(k), value_of(k, 0).data());
      done->store(i, std::memory_order_release);
      if (i == 3000000) _exit(1);
    }
  }
  // Until the child has put enough, or ended by itself (then the test fails below, not hangs).
  int status = 0;
  bool ended = false;
  while (done->load() < 20000 && !(ended = waitpid(child, &status, WNOHANG) == child)) std::this_thread::yield();
  if (!ended) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child ended before it was killed";
  const uint64_t returned = done->load();
  auto tree = pmlab::Tree::open(dir.file("tree"));
  std::map<uint64_t, std::string> model;
  for (uint64_t i = 1; i <= returned; ++i) model[i * 0x9E3779B97F4A7C15ull] = value_of(i * 0x9E3779B97F4A7C15ull, 0);
  const uint64_t in_flight = (returned + 1) * 0x9E3779B97F4A7C15ull;
  std::string got(kValueBytes, '\0');
  if (tree.get(key_of(in_flight), got.data())) {
    EXPECT_EQ(got, value_of(in_flight, 0)) << "the put in flight is there torn";
    model[in_flight] = got;
  }
  expect_holds(tree, model);
  munmap(done, 4096);
}

// Four threads put, update and remove keys of their own while others read and scan: nothing is lost
// or torn, and a clean close keeps it.
TEST(TreeApi, ConcurrentThreadsLoseNothing) {
  TempDir dir;
  constexpr unsigned kThreads = 4;
  constexpr uint64_t kPerThread = 3000;
  const auto written = [](uint64_t k) { return value_of(k, 0); };
  std::map<uint64_t, std::string> model;
  {
    auto tree = pmlab::Tree::create(dir.file("tree"), 32 << 20, options());
    std::atomic<bool> stop{false};
    std::thread reader([&] {
      std::string got(kValueBytes, '\0');
      while (!stop.load()) {
        for (uint64_t k = 0; k < kThreads * kPerThread; k += 97) {
          if (tree.get(key_of(k), got.data())) { EXPECT_EQ(got, written(k)) << k; }
        }
        std::string previous;
        tree.scan("", 500, [&](std::string_view key, const void*) {
          EXPECT_LT(previous, std::string(key));
          previous = key;
        });
      }
    });
    std::vector<std::thread> writers;
    for (unsigned t = 0; t < kThreads; ++t)
      writers.emplace_back([&, t] {
        for (uint64_t i = 0; i < kPerThread; ++i) {
          const uint64_t k = i * kThreads + t;  // interleaved, so threads share leaves
          tree.put(key_of(k), written(k).data());
          if (i % 3 == 0) {
            EXPECT_TRUE(tree.remove(key_of(k)));
          } else if (i % 3 == 1) {
            EXPECT_TRUE(tree.update(key_of(k), written(k).data()));
          }
        }
      });
    for (auto& w : writers) w.join();
    stop = true;
    reader.join();
    for (uint64_t i = 0; i < kPerThread; ++i)
      for (unsigned t = 0; t < kThreads; ++t)
        if (i % 3 != 0) model[i * kThreads + t] = written(i * kThreads + t);
    expect_holds(tree, model);
  }
  expect_holds(pmlab::Tree::open(dir.file("tree")), model);
}

// A pool too small for every put: the puts refused with PMLAB_E_POOL_FULL change nothing, every key
// that went in is there after reopening, and updates and removes still work.
TEST(TreeApi, AFullPoolRefusesPutsAndKeepsEverything) {
  TempDir dir;
  std::map<uint64_t, std::string> model;
  {
    auto tree = pmlab::Tree::create(dir.file("tree"), 2 << 20, options());
    uint64_t refused = 0;
    for (uint64_t i = 0; i < 200000 && refused < 50; ++i) {
      const uint64_t k = i * 0x9E3779B97F4A7C15ull;
      const int code = code_of([&] { tree.put(key_of(k), value_of(k, 1).data()); });
      if (code == PMLAB_OK) model[k] = value_of(k, 1);
      else ASSERT_EQ(code, PMLAB_E_POOL_FULL);
      refused += code != PMLAB_OK;
    }
    ASSERT_EQ(refused, 50u) << "the pool never filled";
    EXPECT_GT(tree.stats().bytes_used, tree.stats().bytes_capacity * 9 / 10);
    // An update writes a free slot of its leaf: in a full leaf it must split, and may find no room.
    uint64_t updated = 0;
    for (auto& [k, v] : model) {
      const std::string next = value_of(k, 2);
      const int code = code_of([&] { EXPECT_TRUE(tree.update(key_of(k), next.data())); });
      ASSERT_TRUE(code == PMLAB_OK || code == PMLAB_E_POOL_FULL) << code;
      if (code == PMLAB_OK) {
        v = next;
        ++updated;
      }
    }
    EXPECT_GT(updated, model.size() / 4) << "leaves with free slots take updates";
    expect_holds(tree, model);
  }
  expect_holds(pmlab::Tree::open(dir.file("tree")), model);
}

TEST(TreeApi, BadInputIsRefusedAndLosesNothing) {
  TempDir dir;
  EXPECT_EQ(code_of([&] { pmlab::Tree::create(dir.file("a"), 8 << 20, options(9)); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Tree::create(dir.file("a"), 8 << 20, {8, 0}); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Tree::create(dir.file("a"), 8 << 20, {8, 1025}); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Tree::open(dir.file("absent")); }), PMLAB_E_NOT_FOUND);
  {
    auto tree = pmlab::Tree::create(dir.file("tree"), 8 << 20, options());
    tree.put(key_of(1), value_of(1, 0).data());
    EXPECT_EQ(code_of([&] { pmlab::Tree::create(dir.file("tree"), 8 << 20, options()); }), PMLAB_E_ALREADY_EXISTS);
    EXPECT_EQ(code_of([&] { pmlab::Tree::open(dir.file("tree")); }), PMLAB_E_BUSY);
    std::string got(kValueBytes, '\0');
    EXPECT_EQ(code_of([&] { tree.put("short", got.data()); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(code_of([&] { (void)tree.get(key_of(1, 9), got.data()); }), PMLAB_E_INVALID_ARGUMENT);
    pmlab::Tree moved = std::move(tree);
    EXPECT_EQ(code_of([&] { (void)tree.get(key_of(1), got.data()); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_TRUE(moved.get(key_of(1), got.data()));
  }
  // Another layout's pool, and a tree whose descriptor was damaged: refused, the file left as it was.
  pmlab::Log::create(dir.file("log"), 8 << 20);
  EXPECT_EQ(code_of([&] { pmlab::Tree::open(dir.file("log")); }), PMLAB_E_WRONG_LAYOUT);
  {
    std::fstream f(dir.file("tree"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 + 8);  // the descriptor's key size, past the pool header
    const uint64_t nine = 9;
    f.write(reinterpret_cast<const char*>(&nine), 8);
  }
  EXPECT_EQ(code_of([&] { pmlab::Tree::open(dir.file("tree")); }), PMLAB_E_CORRUPTED);
  {
    // The key size as it was, and a value size one byte shorter: still a valid size, but not this tree's.
    std::fstream f(dir.file("tree"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 + 8);
    const uint64_t sizes[2] = {options().key_bytes, kValueBytes - 1};
    f.write(reinterpret_cast<const char*>(sizes), sizeof sizes);
  }
  EXPECT_EQ(code_of([&] { pmlab::Tree::open(dir.file("tree")); }), PMLAB_E_CORRUPTED);
}

// The C API: each call's codes, a visitor that stops the scan, null arguments, and a reopen.
TEST(TreeCApi, OperationsAndCodes) {
  TempDir dir;
  const std::string path = dir.file("tree");
  const pmlab_tree_config config = {2, 4};
  pmlab_tree* tree = nullptr;
  ASSERT_EQ(pmlab_tree_create(path.c_str(), 8 << 20, &config, &tree), PMLAB_OK);
  pmlab_tree* again = nullptr;
  EXPECT_EQ(pmlab_tree_create(path.c_str(), 8 << 20, &config, &again), PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(pmlab_tree_open(path.c_str(), &again), PMLAB_E_BUSY);
  EXPECT_EQ(again, nullptr);
  for (const char* k : {"aa", "bb", "cc", "dd"}) ASSERT_EQ(pmlab_tree_put(tree, k, 2, "vvvv"), PMLAB_OK);
  char value[4];
  EXPECT_EQ(pmlab_tree_get(tree, "zz", 2, value), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(pmlab_tree_update(tree, "zz", 2, "wwww"), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(pmlab_tree_update(tree, "cc", 2, "wwww"), PMLAB_OK);
  EXPECT_EQ(pmlab_tree_remove(tree, "bb", 2), PMLAB_OK);
  EXPECT_EQ(pmlab_tree_remove(tree, "bb", 2), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(pmlab_tree_get(tree, "abc", 3, value), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pmlab_errormsg()).find("3 bytes"), std::string::npos) << pmlab_errormsg();
  EXPECT_EQ(pmlab_tree_get(tree, nullptr, 2, value), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_tree_put(tree, "aa", 2, nullptr), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_tree_remove(nullptr, "aa", 2), PMLAB_E_INVALID_ARGUMENT);
  struct Visit {
    std::string keys;
  } visit;
  const auto stop_at_two = [](const void* key, const void*, void* arg) {
    auto& v = *static_cast<Visit*>(arg);
    v.keys.append(static_cast<const char*>(key), 2);
    return v.keys.size() == 4 ? 7 : 0;
  };
  uint64_t visited = 0;
  EXPECT_EQ(pmlab_tree_scan(tree, "a", 1, 10, stop_at_two, &visit, &visited), 7);
  EXPECT_EQ(visit.keys, "aacc");
  EXPECT_EQ(pmlab_tree_check(tree), PMLAB_OK);
  pmlab_tree_close(tree);

  ASSERT_EQ(pmlab_tree_open(path.c_str(), &tree), PMLAB_OK);
  pmlab_tree_stats stats{};
  ASSERT_EQ(pmlab_tree_get_stats(tree, &stats), PMLAB_OK);
  EXPECT_EQ(stats.keys, 3u);
  EXPECT_EQ(stats.index_rebuilt, 0);
  EXPECT_LT(stats.bytes_used, stats.bytes_capacity);
  ASSERT_EQ(pmlab_tree_get(tree, "cc", 2, value), PMLAB_OK);
  EXPECT_EQ(std::string(value, 4), "wwww");
  visit.keys.clear();
  EXPECT_EQ(pmlab_tree_scan(tree, nullptr, 0, 10, stop_at_two, &visit, nullptr), 7);
  pmlab_tree_close(tree);
  pmlab_tree_close(nullptr);
}

// `pmlab pool check` and `pmlab pool recover` know a tree's layout: its leaves are checked, and a
// recovery leaves it open as the API's open does.
TEST(TreeApi, ThePoolToolsKnowTheLayout) {
  TempDir dir;
  std::map<uint64_t, std::string> model;
  {
    auto tree = pmlab::Tree::create(dir.file("tree"), 8 << 20, options());
    for (uint64_t k = 0; k < 500; ++k) {
      tree.put(key_of(k * 3), value_of(k * 3, 0).data());
      model[k * 3] = value_of(k * 3, 0);
    }
  }
  const pmlab::pool::Layout* layout = pmlab::pool::LayoutRegistry::instance().find("tree");
  ASSERT_NE(layout, nullptr);
  {
    auto pool = pmlab::pool::Pool::open(dir.file("tree"));
    ASSERT_TRUE(pool.ok());
    EXPECT_TRUE(layout->check(**pool).ok()) << layout->check(**pool).message();
    EXPECT_TRUE(layout->recover(**pool).ok());
  }
  expect_holds(pmlab::Tree::open(dir.file("tree")), model);
}

}  // namespace
