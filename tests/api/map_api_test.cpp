// pmlab::Map and the C API's pmlab_map as a user sees them: a B+-tree or hashtable map in a PTM heap,
// checked against std::map through random operations, across reopening, inside aborted transactions,
// shared by threads, and with bad keys, sizes and roots.
#include <pmlab/map.hpp>
#include <pmlab/pmlab.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

struct Case {
  pmlab::PtmKind ptm;
  pmlab::MapKind map;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.ptm == pmlab::PtmKind::redo ? "Redo" : "Undo") +
         (info.param.map == pmlab::MapKind::bptree ? "BPTree" : "Hashtable");
}

// A key of `bytes` bytes, big-endian: keys sort as their numbers.
std::string key_of(uint64_t n, unsigned bytes) {
  std::string k(bytes, '\0');
  for (size_t i = bytes; i-- > 0; n >>= 8) k[i] = static_cast<char>(n & 0xff);
  return k;
}

class MapApi : public ::testing::TestWithParam<Case> {
 protected:
  pmlab::Ptm make(const std::string& name, unsigned threads = 2) {
    return pmlab::Ptm::create(dir_.file(name), 32 << 20, {GetParam().ptm, threads, 64 << 10});
  }
  pmlab::MapOptions options(unsigned key_bytes, unsigned value_bytes) const {
    pmlab::MapOptions o;
    o.kind = GetParam().map;
    o.key_bytes = key_bytes;
    o.value_bytes = value_bytes;
    o.capacity = 512;
    return o;
  }
  bool ordered() const { return GetParam().map == pmlab::MapKind::bptree; }
  TempDir dir_;
};

// Random puts, updates, removes, gets and scans on 3-byte keys with 20-byte values, a few per
// transaction, against std::map; then reopened, the same contents.
TEST_P(MapApi, MatchesAStdMapAcrossReopening) {
  constexpr unsigned kKey = 3, kValue = 20;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(42);
  {
    auto ptm = make("heap");
    auto map = pmlab::Map::create(ptm, 5, options(kKey, kValue));
    for (int round = 0; round < 400; ++round) {
      ptm.run([&](pmlab::Transaction& tx) {
        for (int op = 0; op < 5; ++op) {
          const std::string key = key_of(rng() % 700, kKey);
          std::string value(kValue, static_cast<char>('a' + rng() % 26));
          std::string got(kValue, '\0');
          switch (rng() % 5) {
            case 0:
            case 1:
              map.put(tx, key, value.data());
              model[key] = value;
              break;
            case 2:
              ASSERT_EQ(map.update(tx, key, value.data()), model.contains(key));
              if (model.contains(key)) model[key] = value;
              break;
            case 3: ASSERT_EQ(map.remove(tx, key), model.erase(key) == 1); break;
            default:
              ASSERT_EQ(map.get(tx, key, got.data()), model.contains(key));
              if (model.contains(key)) { ASSERT_EQ(got, model[key]); }
          }
        }
        if (ordered() && round % 20 == 0) {
          const std::string from = key_of(rng() % 700, kKey);
          std::vector<std::pair<std::string, std::string>> seen;
          const uint64_t n = map.scan(tx, from, 9, [&](std::string_view k, const void* v) {
            seen.emplace_back(std::string(k), std::string(static_cast<const char*>(v), kValue));
          });
          ASSERT_EQ(n, seen.size());
          auto it = model.lower_bound(from);
          for (const auto& entry : seen) {
            ASSERT_NE(it, model.end());
            ASSERT_EQ(entry.first, it->first);
            ASSERT_EQ(entry.second, it->second);
            ++it;
          }
          ASSERT_TRUE(n == 9 || it == model.end()) << "a scan stopped short of its limit";
        }
      });
    }
    ptm.run([&](pmlab::Transaction& tx) {
      EXPECT_EQ(map.size(tx), model.size());
      map.check(tx);
    });
  }
  auto ptm = pmlab::Ptm::open(dir_.file("heap"));
  const auto map = pmlab::Map::open(ptm, 5);
  EXPECT_EQ(map.options().key_bytes, kKey);
  EXPECT_EQ(map.options().value_bytes, kValue);
  EXPECT_EQ(map.options().kind, GetParam().map);
  ptm.run([&](pmlab::Transaction& tx) {
    EXPECT_EQ(map.size(tx), model.size());
    std::string got(kValue, '\0');
    for (const auto& [key, value] : model) {
      ASSERT_TRUE(map.get(tx, key, got.data()));
      ASSERT_EQ(got, value);
    }
    if (ordered()) {
      std::vector<std::string> keys;
      map.scan(tx, "", UINT64_MAX, [&](std::string_view k, const void*) { keys.emplace_back(k); });
      std::vector<std::string> expected;
      for (const auto& entry : model) expected.push_back(entry.first);
      EXPECT_EQ(keys, expected);
    }
  });
}

// A transaction that aborts or throws leaves the map as it was, splits included; one that commits puts
// the map's change and the heap's other writes in place together.
TEST_P(MapApi, AbortedTransactionsLeaveNoEntries) {
  auto ptm = make("heap");
  auto map = pmlab::Map::create(ptm, 0, options(8, 8));
  const uint64_t one = 1;
  EXPECT_FALSE(ptm.run([&](pmlab::Transaction& tx) {
    for (uint64_t k = 0; k < 300; ++k) map.put(tx, key_of(k, 8), &one);  // splits leaves
    tx.abort();
  }));
  EXPECT_THROW(ptm.run([&](pmlab::Transaction& tx) {
    map.put(tx, key_of(7, 8), &one);
    throw std::runtime_error("the body fails");
  }),
               std::runtime_error);
  ptm.run([&](pmlab::Transaction& tx) {
    EXPECT_EQ(map.size(tx), 0u);
    map.check(tx);
    map.put(tx, key_of(9, 8), &one);
    tx.write(tx.root(1), 99);
  });
  ptm.run([&](pmlab::Transaction& tx) {
    uint64_t v = 0;
    EXPECT_TRUE(map.get(tx, key_of(9, 8), &v));
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(tx.read(tx.root(1)), 99u);
  });
}

// Threads each put and remove their own keys on one map (the redo PTM runs them in parallel, the undo
// PTM by turns): every thread's last puts are there, nothing else.
TEST_P(MapApi, ConcurrentThreadsShareAMap) {
  constexpr int kThreads = 4, kKeys = 300;
  auto ptm = make("heap", kThreads);
  auto map = pmlab::Map::create(ptm, 2, options(4, 8));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto session = ptm.session();
      for (uint64_t i = 0; i < kKeys; ++i) {
        const uint64_t k = i * kThreads + t, v = k * 3;
        session.run([&](pmlab::Transaction& tx) { map.put(tx, key_of(k, 4), &v); });
        if (i % 3 == 0) session.run([&](pmlab::Transaction& tx) { map.remove(tx, key_of(k, 4)); });
      }
    });
  for (auto& thread : threads) thread.join();
  ptm.run([&](pmlab::Transaction& tx) {
    map.check(tx);
    EXPECT_EQ(map.size(tx), kThreads * (kKeys - (kKeys + 2) / 3));
    for (uint64_t k = 0; k < kThreads * kKeys; ++k) {
      uint64_t v = 0;
      const bool kept = (k / kThreads) % 3 != 0;
      ASSERT_EQ(map.get(tx, key_of(k, 4), &v), kept) << k;
      if (kept) { ASSERT_EQ(v, k * 3); }
    }
  });
}

TEST_P(MapApi, BadKeysRootsAndOptionsAreErrors) {
  auto ptm = make("heap");
  pmlab::MapOptions bad = options(9, 8);
  EXPECT_EQ(code_of([&] { pmlab::Map::create(ptm, 0, bad); }), PMLAB_E_INVALID_ARGUMENT);
  bad = options(8, 0);
  EXPECT_EQ(code_of([&] { pmlab::Map::create(ptm, 0, bad); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Map::create(ptm, pmlab::Transaction::kRoots, options(8, 8)); }),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Map::open(ptm, 0); }), PMLAB_E_NOT_FOUND);
  auto map = pmlab::Map::create(ptm, 0, options(8, 8));
  EXPECT_EQ(code_of([&] { pmlab::Map::create(ptm, 0, options(8, 8)); }), PMLAB_E_ALREADY_EXISTS);
  // A root word that links to something else.
  ptm.run([](pmlab::Transaction& tx) {
    const uint64_t block = tx.alloc(64);
    for (uint64_t i = 0; i < 64; i += 8) tx.write(block + i, 0x1234);
    tx.write(tx.root(1), block);
  });
  EXPECT_EQ(code_of([&] { pmlab::Map::open(ptm, 1); }), PMLAB_E_CORRUPTED);
  const uint64_t v = 5;
  EXPECT_EQ(code_of([&] { ptm.run([&](pmlab::Transaction& tx) { map.put(tx, "short", &v); }); }),
            PMLAB_E_INVALID_ARGUMENT);
  // A map used in another Ptm's transaction.
  auto other = make("other");
  EXPECT_EQ(code_of([&] { other.run([&](pmlab::Transaction& tx) { map.put(tx, key_of(1, 8), &v); }); }),
            PMLAB_E_INVALID_ARGUMENT);
  if (!ordered()) {
    EXPECT_EQ(code_of([&] {
                ptm.run([&](pmlab::Transaction& tx) { map.scan(tx, "", 1, [](std::string_view, const void*) {}); });
              }),
              PMLAB_E_UNSUPPORTED);
  }
  // A descriptor whose value size lost a bit (a stray write, a media error): still a valid size, but not
  // the map's, so refused rather than copied with.
  ptm.run([](pmlab::Transaction& tx) {
    const uint64_t value_bytes = tx.read(tx.root(0)) + 24;
    tx.write(value_bytes, tx.read(value_bytes) ^ 1);
  });
  EXPECT_EQ(code_of([&] { pmlab::Map::open(ptm, 0); }), PMLAB_E_CORRUPTED);
}

INSTANTIATE_TEST_SUITE_P(Kinds, MapApi,
                         ::testing::Values(Case{pmlab::PtmKind::redo, pmlab::MapKind::bptree},
                                           Case{pmlab::PtmKind::undo, pmlab::MapKind::bptree},
                                           Case{pmlab::PtmKind::redo, pmlab::MapKind::hashtable},
                                           Case{pmlab::PtmKind::undo, pmlab::MapKind::hashtable}),
                         name_of);

// Scans whose start key is shorter or longer than the map's keys, and the largest keys.
TEST(MapScan, StartKeysOfAnyLengthAndTheLargestKeys) {
  TempDir dir;
  auto ptm = pmlab::Ptm::create(dir.file("heap"), 8 << 20);
  pmlab::MapOptions o;
  o.key_bytes = 2;
  o.value_bytes = 1;
  auto map = pmlab::Map::create(ptm, 0, o);
  ptm.run([&](pmlab::Transaction& tx) {
    for (const char* k : {"\x00\x01", "ab", "ac", "b\x00", "\xff\xfe", "\xff\xff"}) map.put(tx, {k, 2}, k);
    const auto first = [&](std::string_view from) {
      std::string got = "(none)";
      map.scan(tx, from, 1, [&](std::string_view k, const void*) { got = std::string(k); });
      return got;
    };
    EXPECT_EQ(first(""), std::string("\x00\x01", 2));
    EXPECT_EQ(first("a"), "ab");
    EXPECT_EQ(first(std::string("ab\0", 3)), "ab") << "trailing zeros past the key size change nothing";
    EXPECT_EQ(first("ab\x01"), "ac") << "a longer start key begins after its prefix";
    EXPECT_EQ(first("b"), std::string("b\x00", 2));
    EXPECT_EQ(first("\xff\xff"), "\xff\xff");
    EXPECT_EQ(first("\xff\xff\x01"), "(none)");
    EXPECT_EQ(map.scan(tx, "ab", 3, [](std::string_view, const void*) {}), 3u);
  });
}

// The C API: create, put, get, update, remove, scan with a visitor that stops, and the codes.
struct Visit {
  std::string keys;
  int stop_after;
};

int collect(const void* key, const void*, void* arg) {
  auto* v = static_cast<Visit*>(arg);
  v->keys.append(static_cast<const char*>(key), 2);
  return static_cast<int>(v->keys.size() / 2) == v->stop_after ? 7 : 0;
}

TEST(MapCApi, OperationsAndCodes) {
  TempDir dir;
  pmlab_ptm* ptm = nullptr;
  ASSERT_EQ(pmlab_ptm_create(dir.file("heap").c_str(), 8 << 20, nullptr, &ptm), PMLAB_OK);
  pmlab_map_config config = {PMLAB_MAP_BPTREE, 2, 4, 0};
  pmlab_map* map = nullptr;
  ASSERT_EQ(pmlab_map_create(ptm, 3, &config, &map), PMLAB_OK);
  pmlab_map* again = nullptr;
  EXPECT_EQ(pmlab_map_create(ptm, 3, &config, &again), PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(again, nullptr);
  struct Args {
    pmlab_map* map = nullptr;
    Visit visit{"", 2};
    int codes[6] = {};
    uint64_t visited = 0, size = 0;
    std::string message;
  } args;
  args.map = map;
  ASSERT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx* tx, void* a) {
                  auto& s = *static_cast<Args*>(a);
                  for (const char* k : {"aa", "bb", "cc", "dd"}) {
                    const int rc = pmlab_map_put(tx, s.map, k, 2, "vvvv");
                    if (rc != PMLAB_OK) return rc;
                  }
                  char value[4];
                  s.codes[0] = pmlab_map_get(tx, s.map, "zz", 2, value);
                  s.codes[1] = pmlab_map_update(tx, s.map, "zz", 2, "wwww");
                  s.codes[2] = pmlab_map_remove(tx, s.map, "bb", 2);
                  s.codes[3] = pmlab_map_remove(tx, s.map, "bb", 2);
                  s.codes[4] = pmlab_map_get(tx, s.map, "abc", 3, value);
                  s.message = pmlab_errormsg();
                  // A null key, value, map or transaction is an error naming it, not a crash.
                  const auto refused = [](int rc, const char* says) {
                    return rc == PMLAB_E_INVALID_ARGUMENT && std::strstr(pmlab_errormsg(), says) != nullptr;
                  };
                  if (!refused(pmlab_map_get(tx, s.map, nullptr, 2, value), "null key") ||
                      !refused(pmlab_map_put(tx, s.map, "aa", 2, nullptr), "null value") ||
                      !refused(pmlab_map_remove(tx, nullptr, "aa", 2), "null map") ||
                      !refused(pmlab_map_get(nullptr, s.map, "aa", 2, value), "null pmlab_tx"))
                    return 5;
                  s.codes[5] = pmlab_map_scan(tx, s.map, "a", 1, 10, collect, &s.visit, &s.visited);
                  return pmlab_map_size(tx, s.map, &s.size);
                },
                &args),
            PMLAB_OK);
  EXPECT_EQ(args.codes[0], PMLAB_E_NOT_FOUND);
  EXPECT_EQ(args.codes[1], PMLAB_E_NOT_FOUND);
  EXPECT_EQ(args.codes[2], PMLAB_OK);
  EXPECT_EQ(args.codes[3], PMLAB_E_NOT_FOUND);
  EXPECT_EQ(args.codes[4], PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(args.message.find("3 bytes"), std::string::npos) << args.message;
  EXPECT_EQ(args.codes[5], 7) << "the visitor's nonzero return stops the scan and is returned";
  EXPECT_EQ(args.visit.keys, "aacc");
  EXPECT_EQ(args.size, 3u);
  pmlab_map_close(map);
  pmlab_ptm_close(ptm);

  // Reopened: the map is found again at its root; an empty root is not a map.
  ASSERT_EQ(pmlab_ptm_open(dir.file("heap").c_str(), &ptm), PMLAB_OK);
  EXPECT_EQ(pmlab_map_open(ptm, 4, &map), PMLAB_E_NOT_FOUND);
  ASSERT_EQ(pmlab_map_open(ptm, 3, &map), PMLAB_OK);
  uint64_t size = 0;
  struct SizeArgs {
    pmlab_map* map;
    uint64_t* size;
  } size_args{map, &size};
  ASSERT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx* tx, void* a) {
                  auto& s = *static_cast<SizeArgs*>(a);
                  const int rc = pmlab_map_check(tx, s.map);
                  return rc != PMLAB_OK ? rc : pmlab_map_size(tx, s.map, s.size);
                },
                &size_args),
            PMLAB_OK);
  EXPECT_EQ(size, 3u);
  // A kind outside the enumerators, as a C caller may store one, and a map made or opened from inside a
  // transaction (which would nest one: Ptm::run) are refused.
  pmlab_map_config odd{};
  const int nine = 9;
  std::memcpy(&odd.kind, &nine, sizeof nine);
  pmlab_map* other = nullptr;
  EXPECT_EQ(pmlab_map_create(ptm, 5, &odd, &other), PMLAB_E_INVALID_ARGUMENT);
  struct Inside {
    pmlab_ptm* ptm;
    int create, open;
  } inside{ptm, PMLAB_OK, PMLAB_OK};
  ASSERT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx*, void* a) {
                  auto& in = *static_cast<Inside*>(a);
                  pmlab_map* m = nullptr;
                  in.create = pmlab_map_create(in.ptm, 6, nullptr, &m);
                  in.open = pmlab_map_open(in.ptm, 3, &m);
                  return 0;
                },
                &inside),
            PMLAB_OK);
  EXPECT_EQ(inside.create, PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(inside.open, PMLAB_E_INVALID_ARGUMENT);
  pmlab_map_close(map);
  pmlab_ptm_close(ptm);
}

}  // namespace
