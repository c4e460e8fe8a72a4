// --metadata at-own-sync against a reference written from its definition: random runs of files made (some
// without a name, as O_TMPFILE makes them, named by their first link), renamed (over others too), linked,
// removed (a name at a time), cut and extended in two directories, with
// syncs of files and directories between. The replay keeps what is durable as it goes; the reference works out, at
// every crash point and from the whole history, which changes a sync before it made durable, and what a crash that
// keeps those and a prefix of the rest leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <tuple>

#include "pmlab/crash/exec/replay.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

#include "../../support/trace_builder.hpp"

namespace pmlab::crash::exec {
namespace {

using Names = std::vector<std::string>;
using File = std::tuple<bool, std::string, size_t, Names>;  // there, first name, length, its links' names
using Files = std::vector<File>;

struct Change {
  size_t at = 0;       // its place in the run, among changes, syncs and crash points
  bool entry = false;  // where files are; else one file's length
  std::vector<std::pair<size_t, File>> after;
  std::set<std::string> directories;  // entry
  bool cut = false;
};
struct Sync {
  size_t at = 0;
  trace::SyncScope scope = trace::SyncScope::all;
  size_t file = 0;  // file
  std::string directory;
};
// What the reference expects at a crash point.
struct Expected {
  uint64_t not_durable = 0;
  std::vector<std::pair<uint64_t, Files>> unsynced;
  Files every;
  std::vector<std::pair<uint64_t, size_t>> cuts;  // (number among those not durable, new length)
};

// The changes a sync before `now` made durable: each it covers directly (a file's length by that file's
// sync; where files are, once each directory it changed is synced after it; everything by a sync of all),
// and each before one of those of the same file and kind.
std::vector<bool> durable_at(const std::vector<Change>& changes, const std::vector<Sync>& syncs, size_t now) {
  std::vector<bool> durable(changes.size(), false);
  auto synced_after = [&](size_t from, auto&& covers) {
    return std::any_of(syncs.begin(), syncs.end(),
                       [&](const Sync& s) { return s.at > from && s.at < now && covers(s); });
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    const Change& c = changes[i];
    if (c.at >= now) break;
    if (synced_after(c.at, [](const Sync& s) { return s.scope == trace::SyncScope::all; })) durable[i] = true;
    else if (!c.entry)
      durable[i] = synced_after(
          c.at, [&](const Sync& s) { return s.scope == trace::SyncScope::file && s.file == c.after[0].first; });
    else
      durable[i] = std::all_of(c.directories.begin(), c.directories.end(), [&](const std::string& d) {
        return synced_after(c.at,
                            [&](const Sync& s) { return s.scope == trace::SyncScope::directory && s.directory == d; });
      });
  }
  std::set<std::pair<size_t, bool>> forced;
  for (size_t i = changes.size(); i-- > 0;) {
    if (changes[i].at >= now) continue;
    for (const auto& [f, state] : changes[i].after)
      if (forced.count({f, changes[i].entry})) durable[i] = true;
    if (durable[i])
      for (const auto& [f, state] : changes[i].after) forced.insert({f, changes[i].entry});
  }
  return durable;
}

void apply(const Change& c, Files& files) {
  for (const auto& [f, state] : c.after) {
    auto& [present, name, length, links] = files[f];
    if (c.entry) {
      present = std::get<0>(state);
      name = std::get<1>(state);
      links = std::get<3>(state);
    } else {
      length = std::get<2>(state);
    }
  }
}

Expected expected_at(const std::vector<Change>& changes, const std::vector<Sync>& syncs, size_t now,
                     const Files& start) {
  const std::vector<bool> durable = durable_at(changes, syncs, now);
  std::vector<size_t> pending;
  Expected e;
  e.every = start;
  for (size_t i = 0; i < changes.size() && changes[i].at < now; ++i) {
    apply(changes[i], e.every);
    if (!durable[i]) pending.push_back(i);
  }
  e.not_durable = pending.size();
  const size_t n = pending.size();
  for (size_t k = 0; k < n; ++k) {
    if (k != 0 && k + kMaxUnsynced <= n) continue;
    Files left = start;
    for (size_t i = 0; i < changes.size() && changes[i].at < now; ++i)
      if (durable[i] || std::find(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(k), i) !=
                            pending.begin() + static_cast<std::ptrdiff_t>(k))
        apply(changes[i], left);
    e.unsynced.emplace_back(k, left);
  }
  for (size_t k = 0; k < n; ++k)
    if (changes[pending[k]].cut) e.cuts.emplace_back(k, std::get<2>(changes[pending[k]].after[0].second));
  return e;
}

// One random run: its trace, and the reference's expectation at each crash point.
struct RandomRun {
  std::string trace;
  std::vector<Expected> expected;
};

RandomRun random_run(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> dirs = {"/dev/shm/d1", "/dev/shm/d2"};
  constexpr size_t kFiles = 4;
  testing::TraceBuilder b;
  Files now(kFiles), start(kFiles);
  std::vector<std::string> paths(kFiles);
  std::vector<Names> link_paths(kFiles);
  std::vector<bool> made(kFiles, false), nameless(kFiles, false), named(kFiles, false);
  for (size_t f = 0; f < kFiles; ++f) {
    // A file made without a name is known by the name its first link will give it.
    nameless[f] = pick(3) == 0;
    const std::string name = (nameless[f] ? "u" : "f") + std::to_string(f);
    paths[f] = dirs[nameless[f] ? pick(2) : f % 2] + "/" + name;
    now[f] = start[f] = {false, name, 0, {}};
  }
  // Made, without a name, and not linked yet: in no image, but its length is a change of its own.
  auto unnamed = [&](size_t f) { return made[f] && nameless[f] && !named[f]; };
  std::vector<Change> changes;
  std::vector<Sync> syncs;
  std::vector<size_t> points;  // each crash point's place
  size_t at = 0, names = kFiles;
  auto dir_of = [](const std::string& p) { return std::filesystem::path(p).parent_path().string(); };
  auto name_of = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  auto present = [&](size_t f) { return std::get<0>(now[f]); };
  auto gone = [&](size_t f, trace::GoneCall call, const std::string& to, const std::string& from) {
    b.add(trace::Kind::gone,
          trace::GoneRecord{0x42, 1, 10 + f, static_cast<uint32_t>(to.size()), static_cast<uint32_t>(from.size())},
          to + from, 0, static_cast<uint8_t>(call));
  };
  // File `f`'s name at `path` taken away: a link of that name, or its first, whose place its oldest link takes.
  auto take_name = [&](size_t f, const std::string& path) {
    auto& [there, name, length, links] = now[f];
    const auto link = std::find(link_paths[f].begin(), link_paths[f].end(), path);
    if (path != paths[f] && link != link_paths[f].end()) {
      links.erase(links.begin() + (link - link_paths[f].begin()));
      link_paths[f].erase(link);
    } else if (!link_paths[f].empty()) {
      paths[f] = link_paths[f].front();
      name = links.front();
      link_paths[f].erase(link_paths[f].begin());
      links.erase(links.begin());
    } else {
      there = false;
    }
  };
  for (int step = 0; step < 40; ++step) {
    ++at;
    const size_t f = pick(kFiles);
    switch (pick(8)) {
      case 0:  // made: first written, at its path (or at none)
        if (made[f]) break;
        made[f] = true;
        b.region(static_cast<uint32_t>(f), 4096, nameless[f] ? "" : paths[f], 0, 1, 10 + f);
        if (!nameless[f]) {
          std::get<0>(now[f]) = true;
          changes.push_back({at, true, {{f, now[f]}}, {dir_of(paths[f])}, false});
        }
        std::get<2>(now[f]) = 4096;
        changes.push_back({at, false, {{f, now[f]}}, {}, false});
        break;
      case 1: {  // renamed, to a new name or over another file
        if (!present(f)) break;
        const size_t over = pick(kFiles);
        std::string to = dirs[pick(2)] + "/n" + std::to_string(names++);
        if (over != f && present(over)) to = paths[over];
        Change c{at, true, {}, {dir_of(paths[f]), dir_of(to)}, false};
        for (size_t g = 0; g < kFiles; ++g)
          if (g != f && present(g) && paths[g] == to) {
            gone(g, trace::GoneCall::rename, "", to);
            take_name(g, to);
            c.after.emplace_back(g, now[g]);
          }
        gone(f, trace::GoneCall::rename, to, paths[f]);
        paths[f] = to;
        std::get<1>(now[f]) = std::filesystem::path(to).filename().string();
        c.after.emplace(c.after.begin(), f, now[f]);
        std::sort(c.after.begin(), c.after.end());
        changes.push_back(std::move(c));
        break;
      }
      case 2: {  // a name removed: its first or a link; the last for good (made[f] stays: not made again)
        if (!present(f)) break;
        const size_t k = pick(link_paths[f].size() + 1);
        const std::string path = k == 0 ? paths[f] : link_paths[f][k - 1];
        gone(f, trace::GoneCall::unlink, "", path);
        take_name(f, path);
        changes.push_back({at, true, {{f, now[f]}}, {dir_of(path)}, false});
        break;
      }
      case 7: {  // linked: a new name beside those it has, or the first of one made without
        if (unnamed(f)) {
          gone(f, trace::GoneCall::link, paths[f], "");
          named[f] = true;
          std::get<0>(now[f]) = true;
          changes.push_back({at, true, {{f, now[f]}}, {dir_of(paths[f])}, false});
          break;
        }
        if (!present(f)) break;
        const std::string to = dirs[pick(2)] + "/l" + std::to_string(names++);
        gone(f, trace::GoneCall::link, to, "");
        link_paths[f].push_back(to);
        std::get<3>(now[f]).push_back(name_of(to));
        changes.push_back({at, true, {{f, now[f]}}, {dir_of(to)}, false});
        break;
      }
      case 3: {  // cut or extended
        if (!present(f) && !unnamed(f)) break;
        const size_t length = pick(9) * 1024, was = std::get<2>(now[f]);
        if (length == was) break;
        b.add(trace::Kind::resize, trace::ResizeRecord{0x43, 1, 10 + f, length});
        std::get<2>(now[f]) = length;
        changes.push_back({at, false, {{f, now[f]}}, {}, length < was});
        break;
      }
      case 4:  // a file synced
        points.push_back(at);
        syncs.push_back({at, trace::SyncScope::file, f, {}});
        b.sync(trace::FenceCall::fsync, trace::SyncScope::file, 1, 10 + f);
        break;
      case 5: {  // a directory synced
        const std::string d = dirs[pick(2)];
        points.push_back(at);
        syncs.push_back({at, trace::SyncScope::directory, 0, d});
        b.sync(trace::FenceCall::directory_sync, trace::SyncScope::directory, 1, 3, d);
        break;
      }
      default:  // a fence that syncs nothing, or (rarely) every file
        points.push_back(at);
        if (pick(8) == 0) {
          syncs.push_back({at, trace::SyncScope::all, 0, {}});
          b.sync(trace::FenceCall::sync, trace::SyncScope::all, 0, 0);
        } else {
          b.fence();
        }
    }
  }
  points.push_back(++at);
  b.exit();
  // One that no link named has no name at all.
  for (size_t f = 0; f < kFiles; ++f) {
    if (!unnamed(f)) continue;
    std::get<1>(start[f]) = "";
    for (Change& c : changes)
      for (auto& [g, state] : c.after)
        if (g == f) std::get<1>(state) = "";
  }
  RandomRun run{b.bytes(), {}};
  // The replay images the files the run made, in order; the others are no part of it.
  auto imaged = [&](const Files& all) {
    Files out;
    for (size_t f = 0; f < kFiles; ++f)
      if (made[f]) out.push_back(all[f]);
    return out;
  };
  for (size_t point : points) {
    Expected e = expected_at(changes, syncs, point, start);
    e.every = imaged(e.every);
    for (auto& [kept, files] : e.unsynced) files = imaged(files);
    run.expected.push_back(std::move(e));
  }
  return run;
}

// Each run is replayed twice: building every point's ways a crash leaves the files, then only those of a
// random half of the points (Replay::run's `wants_files`), whose others need keep each way's `kept` alone.
TEST(ExecOwnSync, TheReplayLeavesWhatTheDefinitionAllowsAtEveryCrashPoint) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    const RandomRun run = random_run(seed);
    auto t = TraceFile::parse(run.trace);
    ASSERT_TRUE(t.ok()) << t.status().message();
    for (const bool every_point : {true, false}) {
      std::function<bool(uint64_t)> wants;
      if (!every_point) wants = [seed](uint64_t point) { return (mix64(seed * 1000003ULL + point) & 1) != 0; };
      Replay replay(*t, persist::Domain::adr, MetadataDurability::at_own_sync);
      std::vector<Expected> seen;
      ASSERT_TRUE(replay
                      .run(
                          [&](const CrashPointInfo& p, const LineModel&) {
                            Expected e{p.changes_since_sync, {}, {}, {}};
                            auto files = [](const std::vector<FileAtCrash>& of) {
                              Files out;
                              for (const FileAtCrash& f : of) out.emplace_back(f.present, f.name, f.length, f.links);
                              return out;
                            };
                            for (const UnsyncedFiles& u : p.unsynced) e.unsynced.emplace_back(u.kept, files(u.files));
                            e.every = files(p.files);
                            for (const auto& cut : p.cuts) e.cuts.emplace_back(cut->change, cut->length);
                            seen.push_back(std::move(e));
                            return Status{};
                          },
                          wants)
                      .ok());
      ASSERT_EQ(seen.size(), run.expected.size()) << "seed " << seed;
      for (size_t i = 0; i < seen.size(); ++i) {
        const std::string at = "seed " + std::to_string(seed) + ", crash point " + std::to_string(i + 1) +
                               (every_point ? "" : ", half the points built");
        Expected want = run.expected[i];
        const Expected& got = seen[i];
        if (wants && !wants(i + 1) && got.unsynced.size() == want.unsynced.size())
          for (size_t u = 0; u < want.unsynced.size(); ++u)  // with no files, or the same as a full replay's
            if (std::get<1>(got.unsynced[u]).empty()) std::get<1>(want.unsynced[u]).clear();
        ASSERT_EQ(got.not_durable, want.not_durable) << at;
        ASSERT_EQ(got.every, want.every) << at;
        ASSERT_EQ(got.unsynced, want.unsynced) << at;
        ASSERT_EQ(got.cuts, want.cuts) << at;
      }
    }
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
