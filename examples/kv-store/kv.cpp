// A crash-safe key-value store of its own design on pmlab's transactional heap: a chained hash table
// whose every operation is one transaction of the redo PTM, recovered on open.
//
//   kv POOL put KEY VALUE | get KEY | del KEY
//   kv POOL load N        N puts (key kI, value vI), one transaction each
//   kv POOL check         opens (recovering), walks every chain: each node well formed, every key
//                         loaded is a prefix k0..k(M-1) of the loads, each with its value; exit 0 if so
//
// Kill `load` at any moment: `check` finds the keys of every put whose transaction returned.
#include <pmlab/ptm.hpp>

#include <cstdint>
#include <iostream>
#include <set>
#include <string>

namespace {

constexpr uint64_t kBuckets = 1024;
// A node: [next][key bytes][value bytes][key ... value ...], padded to words.
constexpr uint64_t kNext = 0, kKeyLen = 8, kValueLen = 16, kBytes = 24;

uint64_t hash_of(const std::string& key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class Table {
 public:
  explicit Table(pmlab::Transaction& tx) : tx_(tx) {
    buckets_ = tx.read(tx.root(0));
    if (buckets_ == 0) {  // a new heap: the bucket array, all empty
      buckets_ = tx.alloc(8 * kBuckets);
      for (uint64_t i = 0; i < kBuckets; ++i) tx.write(buckets_ + 8 * i, 0);
      tx.write(tx.root(0), buckets_);
    }
  }

  // The node holding `key` and the word that links to it.
  std::pair<uint64_t, uint64_t> find(const std::string& key) const {
    uint64_t link = buckets_ + 8 * (hash_of(key) % kBuckets);
    for (uint64_t node = tx_.read(link); node != 0; link = node + kNext, node = tx_.read(link))
      if (key_of(node) == key) return {node, link};
    return {0, link};
  }
  std::string key_of(uint64_t node) const { return bytes(node + kBytes, tx_.read(node + kKeyLen)); }
  std::string value_of(uint64_t node) const {
    const uint64_t key_len = tx_.read(node + kKeyLen);
    return bytes(node + kBytes + padded(key_len), tx_.read(node + kValueLen));
  }

  void put(const std::string& key, const std::string& value) {
    auto [old, link] = find(key);
    const uint64_t node = tx_.alloc(kBytes + padded(key.size()) + padded(value.size()));
    tx_.write(node + kNext, old != 0 ? tx_.read(old + kNext) : 0);
    tx_.write(node + kKeyLen, key.size());
    tx_.write(node + kValueLen, value.size());
    tx_.write_bytes(node + kBytes, key.data(), key.size());
    tx_.write_bytes(node + kBytes + padded(key.size()), value.data(), value.size());
    tx_.write(link, node);
    if (old != 0) tx_.free(old);
  }

  bool remove(const std::string& key) {
    auto [node, link] = find(key);
    if (node == 0) return false;
    tx_.write(link, tx_.read(node + kNext));
    tx_.free(node);
    return true;
  }

  template <class Visit>
  void for_each(Visit&& visit) const {
    for (uint64_t b = 0; b < kBuckets; ++b)
      for (uint64_t node = tx_.read(buckets_ + 8 * b); node != 0; node = tx_.read(node + kNext)) visit(node);
  }

 private:
  static uint64_t padded(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
  std::string bytes(uint64_t at, uint64_t n) const {
    if (n > 1 << 20) throw std::runtime_error("a node claims " + std::to_string(n) + " bytes");
    std::string s(n, '\0');
    tx_.read_bytes(at, s.data(), n);
    return s;
  }
  pmlab::Transaction& tx_;
  uint64_t buckets_ = 0;
};

pmlab::Ptm open_or_create(const std::string& path) {
  try {
    return pmlab::Ptm::open(path);
  } catch (const pmlab::Error& e) {
    if (e.code() != PMLAB_E_NOT_FOUND) throw;
    return pmlab::Ptm::create(path, 64 << 20, {pmlab::PtmKind::redo, 4, 64 << 10});
  }
}

int check(pmlab::Ptm& ptm) {
  std::set<uint64_t> loaded;
  std::string bad;
  ptm.run([&](pmlab::Transaction& tx) {
    loaded.clear();
    bad.clear();
    Table table(tx);
    table.for_each([&](uint64_t node) {
      const std::string key = table.key_of(node), value = table.value_of(node);
      if (key.size() < 2 || key[0] != 'k') return;
      const uint64_t i = std::stoull(key.substr(1));
      if (value != "v" + key.substr(1)) bad = key + " holds '" + value + "'";
      loaded.insert(i);
    });
  });
  if (!bad.empty()) {
    std::cerr << "kv: " << bad << '\n';
    return 1;
  }
  if (!loaded.empty() && (*loaded.begin() != 0 || *loaded.rbegin() != loaded.size() - 1)) {
    std::cerr << "kv: the loaded keys are not a prefix of the loads (" << loaded.size() << " keys up to k"
              << *loaded.rbegin() << ")\n";
    return 1;
  }
  std::cout << loaded.size() << " loaded keys, " << ptm.stats().recovered << " transaction(s) recovered\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: kv POOL put KEY VALUE | get KEY | del KEY | load N | check\n";
    return 2;
  }
  const std::string command = argv[2];
  try {
    pmlab::Ptm ptm = open_or_create(argv[1]);
    if (command == "put" && argc == 5) {
      ptm.run([&](pmlab::Transaction& tx) { Table(tx).put(argv[3], argv[4]); });
    } else if (command == "get" && argc == 4) {
      std::string value;
      bool found = false;
      ptm.run([&](pmlab::Transaction& tx) {
        Table table(tx);
        const uint64_t node = table.find(argv[3]).first;
        found = node != 0;
        if (found) value = table.value_of(node);
      });
      if (!found) return 1;
      std::cout << value << '\n';
    } else if (command == "del" && argc == 4) {
      bool removed = false;
      ptm.run([&](pmlab::Transaction& tx) { removed = Table(tx).remove(argv[3]); });
      return removed ? 0 : 1;
    } else if (command == "load" && argc == 4) {
      // One thread, many transactions: a session keeps its log slot instead of borrowing one each time.
      pmlab::Ptm::Session session = ptm.session();
      const uint64_t n = std::stoull(argv[3]);
      for (uint64_t i = 0; i < n; ++i)
        session.run([&](pmlab::Transaction& tx) { Table(tx).put("k" + std::to_string(i), "v" + std::to_string(i)); });
    } else if (command == "check") {
      return check(ptm);
    } else {
      std::cerr << "kv: unknown command '" << command << "'\n";
      return 2;
    }
  } catch (const pmlab::Error& e) {
    std::cerr << "kv: " << e.what() << '\n';
    return e.exit_code();
  }
  return 0;
}
