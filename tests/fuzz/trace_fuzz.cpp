// The trace reader and the replay on arbitrary bytes: a trace file is written by a program pmlab does not
// control (killed at any point, or a file named by --trace that is not a trace at all), so TraceFile::parse
// must refuse what is damaged with a Status, and what it accepts must replay (model, crash spaces,
// findings) without a crash, an uncaught exception or a hang.
//
// Input: the trace's bytes after its 64-byte header, which the target writes itself (magic, version, the
// byte count) so that the fuzzer spends its time on the records; one leading byte chooses the domain, the
// granularity and when changes of the file system are durable (bits 2 and 3).
#include <cstring>
#include <string>

#include "fuzz_support.hpp"
#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/exec/replay.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

using namespace pmlab;
using namespace pmlab::crash::exec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  trace::FileHeader h{};
  std::memcpy(h.magic, trace::kMagic, sizeof h.magic);
  h.version = trace::kVersion;
  h.header_bytes = sizeof h;
  h.used_bytes = size - 1;
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  bytes.append(reinterpret_cast<const char*>(data + 1), size - 1);
  auto t = TraceFile::parse(std::move(bytes));
  if (!t) {
    if (t.status().code() != Errc::corrupted) std::abort();
    return 0;
  }
  const persist::Domain domain = data[0] & 1 ? persist::Domain::eadr : persist::Domain::adr;
  const auto metadata = data[0] & 4   ? MetadataDurability::at_sync
                        : data[0] & 8 ? MetadataDurability::at_own_sync
                                      : MetadataDurability::at_call;
  Replay replay(*t, domain, metadata);
  if (replay.image_bytes() > (64u << 20)) return 0;  // a real pool may be this large; the fuzzer's memory not
  const auto g = data[0] & 2 ? crash::Granularity::word : crash::Granularity::line;
  uint64_t points = 0;
  Status s = replay.run([&](const CrashPointInfo& p, const LineModel& m) {
    if (++points > 64) return Status{};
    if (p.unsynced.size() > kMaxUnsynced) std::abort();
    for (const UnsyncedFiles& u : p.unsynced)
      if (u.kept > p.changes_since_sync || u.files.size() != p.files.size()) std::abort();
    for (const auto& cut : p.cuts)
      if (cut->change >= p.changes_since_sync || cut->file >= p.files.size()) std::abort();
    if (p.changes_since_sync > kMaxNotDurable && metadata == MetadataDurability::at_own_sync) std::abort();
    const crash::CrashSpace space = crash::make_space(m.pending(), m.durable(), g);
    const crash::Exploration ex = crash::explore(space, 8, points);
    std::vector<std::byte> image(m.durable().size());
    for (const auto& state : ex.states) {
      crash::build_image(m.durable(), space, state, image.data());
      if (crash::state_hash(m.durable_hash(), m.durable(), space, state) !=
          crash::image_hash(image.data(), image.size()))
        std::abort();  // the incremental hash must be the image's
    }
    return Status{};
  });
  if (!s) std::abort();  // an accepted trace replays
  for (const auto& [offset, origin] : replay.findings().unflushed_at_exit)
    if (offset >= replay.image_bytes()) std::abort();
  return 0;
}
