// A write-ahead log on pmlab's zero log: a key-value table in DRAM whose every update is appended to the
// log before it is applied, rebuilt on open from a snapshot file and the log, and checkpointed when asked
// or when the log fills.
//
//   wal DIR put N      N more updates (update n sets key n % 100 to n), each durable in the log before it
//                      is applied; a full log is checkpointed and the update appended again
//   wal DIR show       opens the log (recovering it), replays it over the snapshot, prints the table
//   wal DIR checkpoint writes the table to a new snapshot, then truncates the log
//
// Updates are numbered, and the snapshot names the last one it holds: replay skips what the snapshot
// already holds, so a crash between a snapshot's rename and the log's truncation loses and repeats nothing.
// Kill `put` at any moment: `show` finds every update whose append returned, in order, and nothing torn.
#include <pmlab/log.hpp>
#include <pmlab/version.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace {

struct Update {
  uint64_t number;  // 1, 2, … over the table's whole life: what makes replay idempotent
  uint64_t key;
  uint64_t value;
};

struct Table {
  std::map<uint64_t, uint64_t> values;
  uint64_t applied = 0;        // updates the table holds: the number of the last one
  uint64_t from_snapshot = 0;  // of them, held by the snapshot
  uint64_t replayed = 0;       // of them, replayed from the log by load()

  void apply(const Update& u) {
    if (u.number != applied + 1)
      throw std::runtime_error("update " + std::to_string(u.number) + " follows update " + std::to_string(applied) +
                               ": the log lost or reordered an append");
    values[u.key] = u.value;
    applied = u.number;
  }
};

constexpr const char* kSnapshotMagic = "pmlab-wal-snapshot";

pmlab::Log open_or_create(const std::string& path) {
  try {
    return pmlab::Log::open(path);
  } catch (const pmlab::Error& e) {
    if (e.code() != PMLAB_E_NOT_FOUND) throw;
    return pmlab::Log::create(path, 32 << 20, {"zero", 1, false});
  }
}

Table load(const std::string& dir, const pmlab::Log& log) {
  Table table;
  std::ifstream snapshot(dir + "/table.snapshot");
  if (snapshot) {
    std::string magic;
    if (!(snapshot >> magic >> table.applied) || magic != kSnapshotMagic)
      throw std::runtime_error(dir + "/table.snapshot is not a snapshot of this table");
    uint64_t k = 0, v = 0;
    while (snapshot >> k >> v) table.values[k] = v;
    if (!snapshot.eof()) throw std::runtime_error(dir + "/table.snapshot is cut short or corrupted");
    table.from_snapshot = table.applied;
  }
  log.for_each([&](const pmlab::LogEntry& e) {
    Update u;
    if (e.size != sizeof u) throw std::runtime_error("an entry of " + std::to_string(e.size) + " bytes");
    std::memcpy(&u, e.data, sizeof u);
    if (u.number <= table.from_snapshot) return;  // a checkpoint cut short before its truncation
    table.apply(u);
    ++table.replayed;
  });
  return table;
}

uint64_t count_of(const std::string& text) {
  size_t used = 0;
  uint64_t n = 0;
  try {
    n = std::stoull(text, &used);
  } catch (const std::logic_error&) {}
  if (text.empty() || text[0] == '-' || used != text.size())
    throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT, "'" + text + "' is not a count of updates");
  return n;
}

void write_durably(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(path + ": " + std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) throw std::runtime_error(path + ": fsync: " + std::strerror(errno));
}

// The snapshot must be durable, and in its place, before the log forgets what it holds.
void checkpoint(const std::string& dir, pmlab::Log& log, Table& table) {
  std::string text = std::string(kSnapshotMagic) + ' ' + std::to_string(table.applied) + '\n';
  for (const auto& [k, v] : table.values) text += std::to_string(k) + ' ' + std::to_string(v) + '\n';
  write_durably(dir + "/table.snapshot.new", text);
  if (std::rename((dir + "/table.snapshot.new").c_str(), (dir + "/table.snapshot").c_str()) != 0)
    throw std::runtime_error(dir + "/table.snapshot: " + std::strerror(errno));
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd < 0 || ::fsync(dir_fd) != 0) throw std::runtime_error(dir + ": fsync: " + std::strerror(errno));
  ::close(dir_fd);
  log.truncate();
  table.from_snapshot = table.applied;
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
    Table table = load(dir, log);
    if (command == "put" && argc == 4) {
      const uint64_t n = count_of(argv[3]);
      uint64_t checkpoints = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t number = table.applied + 1;
        const Update u{number, number % 100, number};
        try {
          log.append(&u, sizeof u);
        } catch (const pmlab::Error& e) {
          if (e.code() != PMLAB_E_POOL_FULL) throw;
          checkpoint(dir, log, table);
          ++checkpoints;
          log.append(&u, sizeof u);
        }
        table.apply(u);  // durable: only now may the update be applied
      }
      std::cout << n << " updates logged, " << checkpoints << " checkpoint(s) when the log filled\n";
    } else if (command == "show" && argc == 3) {
      std::cout << table.applied << " updates: " << table.from_snapshot << " from the snapshot, " << table.replayed
                << " replayed from the log, " << log.stats().torn_tails << " torn append(s) discarded\n";
      for (const auto& [k, v] : table.values) std::cout << k << ' ' << v << '\n';
    } else if (command == "checkpoint" && argc == 3) {
      checkpoint(dir, log, table);
      std::cout << "checkpoint of " << table.values.size() << " keys, " << table.applied << " updates\n";
    } else {
      std::cerr << "wal: unknown command '" << command << "' or wrong arguments\n";
      return 2;
    }
  } catch (const pmlab::Error& e) {
    std::cerr << "wal: " << e.what() << '\n';
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "wal: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
