// Crash subjects log.<writer>[-padded][-streaming]: appends through two lanes and an occasional truncation, checked
// against the durability contract: every append that returned is recovered exactly (payload, lane, LSN
// order), none that had not begun, the one in flight wholly or not at all, a truncation in flight all or
// nothing; and the recovered log appends and recovers again. A partial truncation mid-epoch keeps the
// append before it (lane 0, whose older entries it discards) and empties lane 1: the entries from a
// watermark on must survive it.
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/primitives/log/log.hpp"

namespace pmlab::primitives::log {
namespace {

constexpr uint64_t kMaxPayload = 150;
constexpr uint64_t kTruncateEvery = 10;  // op 9, 19, … truncates everything
constexpr uint64_t kPartialAt = 5;       // op 5, 15, … truncates before the append just before it

// The partial truncation keeps op 4, 14, … in lane 0 and empties lane 1. The stream's LSNs cross 2^32 at
// op 4, so the first one's watermark changes both halves of its word, and a torn one (the new high half
// over the old low half) discards the append it keeps. The full truncation empties both lanes, and the
// append after it goes to lane 0, whose reset must be durable before it.
bool is_partial(uint64_t op) { return op % kTruncateEvery == kPartialAt; }
bool is_truncate(uint64_t op) { return op % kTruncateEvery == kTruncateEvery - 1 || is_partial(op); }
// The first op whose append a truncation keeps.
uint64_t first_kept(uint64_t truncation_op) {
  return is_partial(truncation_op) ? truncation_op - 1 : truncation_op + 1;
}
void discard_before(std::vector<uint64_t>& appends, uint64_t first) {
  std::erase_if(appends, [first](uint64_t op) { return op < first; });
}

// The append at a given place of each truncation epoch has the same size, so in lane 0 (which only the
// full truncations empty) it lands where the one of the epoch before did, and bytes that are a rotation
// of that one's: the same bits set per byte, other values. Over stale bytes (space whose zeroing never
// became durable) any mix of old and new bytes then has the count a zero log checks for: only durable
// zeroing tells a new entry from an old one.
std::vector<std::byte> payload(uint64_t seed, uint64_t op) {
  const uint64_t place = op % kTruncateEvery, epoch = op / kTruncateEvery;
  uint64_t s = seed ^ (place * 0x9e3779b97f4a7c15ULL);
  std::vector<std::byte> p(splitmix64(s) % (kMaxPayload + 1));
  for (size_t k = 0; k < p.size(); ++k) {
    const auto base = static_cast<uint8_t>(splitmix64(s) | 0x11);  // never all zeros or all ones
    const unsigned r = static_cast<unsigned>(epoch % 7) + 1;
    p[k] = static_cast<std::byte>(static_cast<uint8_t>(base << r | base >> (8 - r)));
  }
  return p;
}

class LogSubject final : public crash::Subject {
 public:
  LogSubject(Kind kind, bool padded, Stores stores, const crash::SubjectOptions& o) : ops_(o.ops), seed_(o.seed) {
    options_.kind = kind;
    options_.padded = padded;
    options_.stores = stores;
    options_.lanes = 2;
    options_.dancing_slots = 4;
    options_.log_id = mix64(o.seed) | 1;  // the same bytes in every run of the stream
    // LSNs cross 2^32 early in the stream: an entry's LSN word and the truncation watermark then change
    // both halves, and a torn 8-byte store of either is a state recovery must be shown.
    options_.first_lsn = crash::kCounterBase;
  }

  size_t image_bytes() const override {
    const uint64_t per_lane = (ops_ / 2 + 2) * Log::entry_bytes(options_.kind, options_.padded, kMaxPayload);
    return Log::region_bytes(options_, per_lane);
  }

  void format(crash::Image image, const persist::Persister& p) override {
    auto log = Log::format({image.base, image.size}, p, options_);
    if (!log) throw std::runtime_error("log format: " + log.status().message());
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    auto log = Log::open({image.base, image.size}, p, options_.stores);
    if (!log) throw std::runtime_error("log open: " + log.status().message());
    uint64_t last_lsn = 0;
    for (uint64_t op = 0; op < ops_; ++op) {
      if (is_truncate(op)) {
        ops.begin(op, is_partial(op) ? "truncate before the last append" : "truncate");
        const Status s = is_partial(op) ? (*log)->truncate_before(last_lsn) : (*log)->truncate();
        if (!s) throw std::runtime_error("truncate: " + s.message());
        ops.end(op);
        continue;
      }
      const auto bytes = payload(seed_, op);
      const auto lane = static_cast<uint32_t>(op % 2);
      ops.begin(op, "append " + std::to_string(bytes.size()) + " bytes to lane " + std::to_string(lane));
      auto lsn = (*log)->append(lane, bytes.data(), bytes.size());
      if (!lsn) throw std::runtime_error("append: " + lsn.status().message());
      last_lsn = *lsn;
      ops.end(op);
    }
  }

  // Opening the log is its recovery; the log it opened is kept for the check.
  Status recover(crash::Image image, const persist::Persister& p) override {
    auto log = Log::open({image.base, image.size}, p, options_.stores);
    if (!log) return error(Errc::failed, "recovery failed: " + log.status().message());
    recovered_log_ = std::move(*log);
    return Status::success();
  }

  Status check(crash::Image image, const persist::Persister& p, const crash::CrashPoint& at) override {
    // The appends that must be there: those that returned and that no truncation that returned discarded.
    std::vector<uint64_t> acked;
    for (uint64_t op = 0; op < at.ops_completed; ++op) {
      if (is_truncate(op)) discard_before(acked, first_kept(op));
      else acked.push_back(op);
    }
    const bool in_flight = at.op_in_flight && at.ops_completed < ops_;
    const uint64_t flying = at.ops_completed;
    std::vector<uint64_t> with_flying = acked;
    if (in_flight) {
      if (is_truncate(flying)) discard_before(with_flying, first_kept(flying));
      else with_flying.push_back(flying);
    }
    const auto entries = recovered_log_->entries();
    auto matches = [&](const std::vector<uint64_t>& want) {
      if (entries.size() != want.size()) return false;
      for (size_t i = 0; i < want.size(); ++i) {
        const auto bytes = payload(seed_, want[i]);
        const Entry& e = entries[i];
        if (e.lane != want[i] % 2 || e.payload.size() != bytes.size() ||
            !std::equal(bytes.begin(), bytes.end(), e.payload.begin()))
          return false;
      }
      return true;
    };
    if (!matches(acked) && !(in_flight && matches(with_flying))) {
      std::string got;
      for (const Entry& e : entries) got += " " + std::to_string(e.lsn) + "/" + std::to_string(e.payload.size()) + "B";
      return error(Errc::failed, "recovered " + std::to_string(entries.size()) + " entries (" + got + " ) where " +
                                     std::to_string(acked.size()) + " returned appends" +
                                     (in_flight ? " (and maybe the one in flight)" : "") + " should be, exactly");
    }
    // The recovered log goes on: one more append survives a reopen.
    const std::byte probe[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
    if (auto r = recovered_log_->append(1, probe, sizeof probe); !r)
      return error(Errc::failed, "append after recovery failed: " + r.status().message());
    const size_t before = entries.size();
    recovered_log_.reset();
    auto again = Log::open({image.base, image.size}, p, options_.stores);
    if (!again) return error(Errc::failed, "second recovery failed: " + again.status().message());
    if ((*again)->entries().size() != before + 1)
      return error(Errc::failed, "an append after recovery was lost by the next recovery");
    return Status::success();
  }

 private:
  Options options_;
  uint64_t ops_;
  uint64_t seed_;
  std::unique_ptr<Log> recovered_log_;  // what recover() opened; check() goes on with it
};

crash::SubjectInfo info(Kind kind, bool padded, Stores stores = Stores::cached) {
  const std::string writer = writer_name(kind, padded) + (stores == Stores::streaming ? "-streaming" : "");
  crash::SubjectInfo i;
  i.name = "log." + writer;
  i.description = writer +
                  " log writer, two lanes, appends of 0-150 bytes and a full truncation every 10 operations and a "
                  "partial one between";
  i.make = [kind, padded, stores](const crash::SubjectOptions& o) {
    return std::make_unique<LogSubject>(kind, padded, stores, o);
  };
  return i;
}

const crash::SubjectRegistration classic{info(Kind::classic, false)};
const crash::SubjectRegistration classic_padded{info(Kind::classic, true)};
const crash::SubjectRegistration header{info(Kind::header, false)};
const crash::SubjectRegistration header_padded{info(Kind::header, true)};
const crash::SubjectRegistration dancing{info(Kind::header_dancing, false)};
const crash::SubjectRegistration dancing_padded{info(Kind::header_dancing, true)};
const crash::SubjectRegistration zero{info(Kind::zero, false)};
const crash::SubjectRegistration zero_padded{info(Kind::zero, true)};
// Streaming stores: packed entries share lines, so each append re-stores its first line from DRAM.
const crash::SubjectRegistration classic_streaming{info(Kind::classic, false, Stores::streaming)};
const crash::SubjectRegistration header_streaming{info(Kind::header, false, Stores::streaming)};
const crash::SubjectRegistration dancing_streaming{info(Kind::header_dancing, false, Stores::streaming)};
const crash::SubjectRegistration zero_streaming{info(Kind::zero, false, Stores::streaming)};
const crash::SubjectRegistration zero_padded_streaming{info(Kind::zero, true, Stores::streaming)};

}  // namespace
}  // namespace pmlab::primitives::log
