// selftest.scan-log and its broken twin: a log of variable-length entries {len, checksum, payload}
// with no commit word; recovery scans from the start. The correct recovery validates each entry's
// length and checksum before trusting it; the broken one trusts the length.
#include <cstring>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kMaxPayload = 200;

struct EntryHeader {
  uint64_t len;       // payload bytes; 0 ends the log
  uint64_t checksum;  // over len and payload
};

uint64_t entry_checksum(uint64_t len, const unsigned char* payload) {
  return fnv1a64(payload, len, kFnvOffsetBasis64 ^ len) | 1;  // never 0: an all-zero header never validates
}

uint64_t payload_len(uint64_t seed, uint64_t op) {
  uint64_t s = seed + op * 0x9e3779b97f4a7c15ULL;
  return 8 + splitmix64(s) % (kMaxPayload - 7);
}

unsigned char payload_byte(uint64_t seed, uint64_t op, uint64_t k) {
  return static_cast<unsigned char>((seed * 131 + op * 31 + k * 7) % 251 + 1);
}

uint64_t padded(uint64_t len) { return sizeof(EntryHeader) + ((len + 7) & ~uint64_t{7}); }

enum class Bug { none, trusted_length };

class ScanLog final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return ops_ * padded(kMaxPayload) + sizeof(EntryHeader); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    uint64_t tail = 0;
    std::vector<unsigned char> payload(kMaxPayload);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "append entry " + std::to_string(i));
      const uint64_t len = payload_len(seed_, i);
      for (uint64_t k = 0; k < len; ++k) payload[k] = payload_byte(seed_, i, k);
      std::byte* at = image.base + tail;
      EntryHeader h{len, entry_checksum(len, payload.data())};
      std::memcpy(at + sizeof h, payload.data(), len);
      std::memcpy(at, &h, sizeof h);
      p.persist(at, padded(len));
      tail += padded(len);
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: recovery is a scan that only reads, and check() runs it
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    // Recovery's scan: entries from the start, each checked as the scan returns it.
    uint64_t offset = 0, found = 0;
    std::vector<std::string> problems;
    while (offset + sizeof(EntryHeader) <= image.size) {
      EntryHeader h;
      std::memcpy(&h, image.base + offset, sizeof h);
      if (h.len == 0) break;
      const auto* payload = reinterpret_cast<const unsigned char*>(image.base + offset + sizeof h);
      if (variant_ != Bug::trusted_length) {
        if (h.len > kMaxPayload || offset + padded(h.len) > image.size) break;
        if (entry_checksum(h.len, payload) != h.checksum) break;
      }
      // Check: the entry recovery returned must be exactly the one appended as operation `found`.
      const uint64_t want = payload_len(seed_, found);
      bool exact = h.len == want;
      for (uint64_t k = 0; k < want && exact; ++k) exact = payload[k] == payload_byte(seed_, found, k);
      if (!exact) return error(Errc::failed, "recovery returned a torn entry " + std::to_string(found));
      ++found;
      offset += padded(h.len);
    }
    const uint64_t started = at.ops_completed + (at.op_in_flight ? 1 : 0);
    if (found < at.ops_completed)
      return error(Errc::failed, "entry " + std::to_string(found) + " was appended before the crash but is missing");
    if (found > started) return error(Errc::failed, "recovery returned entries never appended");
    return Status::success();
  }
};

const SelfTestDesign<ScanLog, Bug> registered{"scan-log", {Bug::trusted_length}};

}  // namespace
}  // namespace pmlab::crash::selftest
