// A crash-safe key-value store on pmlab: the B+-tree map (pmlab::Map) under the redo PTM, each
// operation one transaction, recovered on open.
//
//   kv POOL put KEY VALUE | get KEY | del KEY
//   kv POOL scan FROM N   the first N entries from key FROM on, in key order
//   kv POOL load N        N puts (key kI, value vI), one transaction each
//   kv POOL check         opens (recovering), checks the tree, and walks it: every loaded key is one of a
//                         prefix k0..k(M-1) of the loads, each with its value; exit 0 if so
//
// Keys are up to 8 bytes (the map's fixed key size; shorter ones padded with zeros) and values up to 31
// (a length byte and the bytes, in the map's fixed 32-byte values). Kill `load` at any moment: `check`
// finds the keys of every put whose transaction returned.
#include <pmlab/map.hpp>
#include <pmlab/ptm.hpp>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <set>
#include <string>

namespace {

constexpr unsigned kKeyBytes = 8, kValueBytes = 32;
constexpr unsigned kMapRoot = 0;

std::string key_of(const std::string& text) {
  if (text.size() > kKeyBytes)
    throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT, "a key of more than " + std::to_string(kKeyBytes) + " bytes");
  return text + std::string(kKeyBytes - text.size(), '\0');
}
std::string text_of(std::string_view key) { return std::string(key.substr(0, key.find('\0'))); }

struct Value {
  unsigned char bytes[kValueBytes] = {};
  static Value of(const std::string& text) {
    if (text.size() >= kValueBytes)
      throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT,
                         "a value of more than " + std::to_string(kValueBytes - 1) + " bytes");
    Value v;
    v.bytes[0] = static_cast<unsigned char>(text.size());
    std::memcpy(v.bytes + 1, text.data(), text.size());
    return v;
  }
  static std::string text(const void* stored) {
    const auto* b = static_cast<const unsigned char*>(stored);
    if (b[0] >= kValueBytes) throw pmlab::Error(PMLAB_E_CORRUPTED, "a value claims " + std::to_string(b[0]) + " bytes");
    return std::string(reinterpret_cast<const char*>(b + 1), b[0]);
  }
};

// The store in POOL, made on first use: a heap of the redo PTM with the map linked from root 0.
struct Store {
  pmlab::Ptm ptm;
  pmlab::Map map;

  static Store open_or_create(const std::string& path) {
    pmlab::Ptm ptm = open_heap(path);
    try {
      pmlab::Map map = pmlab::Map::open(ptm, kMapRoot);
      return {std::move(ptm), std::move(map)};
    } catch (const pmlab::Error& e) {
      if (e.code() != PMLAB_E_NOT_FOUND) throw;  // else a crash came between the two creates
    }
    pmlab::MapOptions o;
    o.kind = pmlab::MapKind::bptree;
    o.key_bytes = kKeyBytes;
    o.value_bytes = kValueBytes;
    pmlab::Map map = pmlab::Map::create(ptm, kMapRoot, o);
    return {std::move(ptm), std::move(map)};
  }

 private:
  static pmlab::Ptm open_heap(const std::string& path) {
    try {
      return pmlab::Ptm::open(path);
    } catch (const pmlab::Error& e) {
      if (e.code() != PMLAB_E_NOT_FOUND) throw;
    }
    return pmlab::Ptm::create(path, 256 << 20, {pmlab::PtmKind::redo, 4, 64 << 10});
  }
};

int check(Store& s) {
  std::set<uint64_t> loaded;
  std::string bad;
  s.ptm.run([&](pmlab::Transaction& tx) {
    loaded.clear();
    bad.clear();
    s.map.check(tx);
    s.map.scan(tx, "", UINT64_MAX, [&](std::string_view stored, const void* value) {
      const std::string key = text_of(stored), text = Value::text(value);
      if (key.size() < 2 || key[0] != 'k') return;
      if (text != "v" + key.substr(1)) bad = key + " holds '" + text + "'";
      loaded.insert(std::stoull(key.substr(1)));
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
  std::cout << loaded.size() << " loaded keys, " << s.ptm.stats().recovered << " transaction(s) recovered\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: kv POOL put KEY VALUE | get KEY | del KEY | scan FROM N | load N | check\n";
    return 2;
  }
  const std::string command = argv[2];
  try {
    Store s = Store::open_or_create(argv[1]);
    if (command == "put" && argc == 5) {
      const std::string key = key_of(argv[3]);
      const Value value = Value::of(argv[4]);
      s.ptm.run([&](pmlab::Transaction& tx) { s.map.put(tx, key, value.bytes); });
    } else if (command == "get" && argc == 4) {
      const std::string key = key_of(argv[3]);
      Value value;
      bool found = false;
      s.ptm.run([&](pmlab::Transaction& tx) { found = s.map.get(tx, key, value.bytes); });
      if (!found) return 1;
      std::cout << Value::text(value.bytes) << '\n';
    } else if (command == "del" && argc == 4) {
      const std::string key = key_of(argv[3]);
      bool removed = false;
      s.ptm.run([&](pmlab::Transaction& tx) { removed = s.map.remove(tx, key); });
      return removed ? 0 : 1;
    } else if (command == "scan" && argc == 5) {
      std::string out;
      s.ptm.run([&](pmlab::Transaction& tx) {
        out.clear();  // a rerun of the body starts the listing again
        s.map.scan(tx, argv[3], std::stoull(argv[4]), [&](std::string_view key, const void* value) {
          out += text_of(key) + ' ' + Value::text(value) + '\n';
        });
      });
      std::cout << out;
    } else if (command == "load" && argc == 4) {
      // One thread, many transactions: a session keeps its log slot instead of borrowing one each time.
      pmlab::Ptm::Session session = s.ptm.session();
      const uint64_t n = std::stoull(argv[3]);
      for (uint64_t i = 0; i < n; ++i) {
        const std::string key = key_of("k" + std::to_string(i));
        const Value value = Value::of("v" + std::to_string(i));
        session.run([&](pmlab::Transaction& tx) { s.map.put(tx, key, value.bytes); });
      }
    } else if (command == "check") {
      return check(s);
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
