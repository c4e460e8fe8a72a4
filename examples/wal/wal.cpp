// A write-ahead log on pmlab's zero log: a key-value table in DRAM whose every update is appended to the
// log before it is applied, rebuilt from the log on open, and checkpointed to a snapshot file.
//
//   wal DIR put N      N updates (key i % 100 = i), each durable in the log before it is applied
//   wal DIR show       opens the log (recovering it), replays it over the snapshot, prints the table
//   wal DIR checkpoint writes the table to the snapshot, then truncates the log (failure-atomically)
//
// Kill `put` at any moment: `show` finds every update whose append returned, in order, and nothing torn.
#include <pmlab/log.hpp>
#include <pmlab/version.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

namespace {

struct Update {
  uint64_t key;
  uint64_t value;
};

pmlab::Log open_or_create(const std::string& path) {
  try {
    return pmlab::Log::open(path);
  } catch (const pmlab::Error& e) {
    if (e.code() != PMLAB_E_NOT_FOUND) throw;
    return pmlab::Log::create(path, 32 << 20, {"zero", 1, false});
  }
}

std::map<uint64_t, uint64_t> load(const std::string& dir, const pmlab::Log& log, uint64_t* replayed) {
  std::map<uint64_t, uint64_t> table;
  std::ifstream snapshot(dir + "/table.snapshot");
  uint64_t k = 0, v = 0;
  while (snapshot >> k >> v) table[k] = v;
  *replayed = 0;
  log.for_each([&](const pmlab::LogEntry& e) {
    Update u;
    if (e.size != sizeof u) throw std::runtime_error("an entry of " + std::to_string(e.size) + " bytes");
    std::memcpy(&u, e.data, sizeof u);
    table[u.key] = u.value;
    ++*replayed;
  });
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: wal DIR put N | show | checkpoint   (pmlab " << PMLAB_VERSION_STRING << ")\n";
    return 2;
  }
  const std::string dir = argv[1], command = argv[2];
  try {
    pmlab::Log log = open_or_create(dir + "/wal.log");
    if (command == "put" && argc == 4) {
      const uint64_t n = std::stoull(argv[3]);
      for (uint64_t i = 1; i <= n; ++i) {
        const Update u{i % 100, i};
        log.append(&u, sizeof u);  // durable: only now may the update be applied (here: nothing to apply)
      }
      std::cout << n << " updates logged\n";
    } else if (command == "show") {
      uint64_t replayed = 0;
      const auto table = load(dir, log, &replayed);
      std::cout << replayed << " updates replayed, " << log.stats().torn_tails << " torn append(s) discarded\n";
      for (const auto& [k, v] : table) std::cout << k << ' ' << v << '\n';
    } else if (command == "checkpoint") {
      uint64_t replayed = 0;
      const auto table = load(dir, log, &replayed);
      {
        std::ofstream out(dir + "/table.snapshot.new");
        for (const auto& [k, v] : table) out << k << ' ' << v << '\n';
      }
      // The snapshot replaces the old one before the log is emptied: a crash in between replays updates the
      // snapshot already holds, which is harmless (each sets a value).
      std::rename((dir + "/table.snapshot.new").c_str(), (dir + "/table.snapshot").c_str());
      log.truncate();
      std::cout << "checkpoint of " << table.size() << " keys, " << replayed << " updates\n";
    } else {
      std::cerr << "wal: unknown command '" << command << "'\n";
      return 2;
    }
  } catch (const pmlab::Error& e) {
    std::cerr << "wal: " << e.what() << '\n';
    return e.exit_code();
  }
  return 0;
}
