// selftest.indexed-store and its broken twin: an append-only key-value store with a volatile index. Each
// put writes a record line and persists it, then publishes it by an 8-byte count and persists that; the
// design also keeps, in DRAM, the keys in order and how many records it knows to be durable. The count
// starts at kCounterBase, so the stream carries it across 2^32: a count that tore (its new low half under
// its old high half) reads below the base, and the check refuses it.
//
// The broken twin's recovery trusts its DRAM bookkeeping, the number of records it remembers as durable,
// instead of the count in the image. After a real power failure that memory is gone (a fresh process
// starts with an empty object), so recovery finds nothing. A checker that lets recovery run in a copy of
// the process that ran the operations hands it that memory, and the bug hides.
#include <cstring>
#include <vector>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

struct alignas(64) Record {
  uint64_t key;
  uint64_t payload[6];
  uint64_t check;
};
struct alignas(64) Header {
  uint64_t count;  // kCounterBase + the records published
  uint64_t pad[7];
};

enum class Bug { none, dram_count };

class IndexedStore final : public HeaderAndRecordsDesign<Bug, Header, Record> {
 public:
  using HeaderAndRecordsDesign::HeaderAndRecordsDesign;

  void format(Image image, const persist::Persister& p) override { format_count(image, p, &Header::count); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Header* h = header(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "put key " + std::to_string(key_of(i)));
      Record& r = record(image, i);
      r.key = key_of(i);
      fill_payload(r.payload, 6, i);
      r.check = checksum_words(&r.key, 7);
      p.persist(&r, sizeof r);
      p.store8(&h->count, kCounterBase + i + 1);
      p.persist(&h->count, 8);
      keys_.push_back(r.key);
      durable_records_ = i + 1;
      ops.end(i);
    }
  }

  // Recovery finds the record count. The broken twin's reads the DRAM count run() kept: on this fresh
  // object it is 0, as after a real power failure.
  Status recover(Image image, const persist::Persister&) override {
    const uint64_t word = header(image)->count;
    if (word < kCounterBase)
      return broken("the count reads " + std::to_string(word) + ", below the base it starts from: it tore");
    recovered_count_ = variant_ == Bug::dram_count ? durable_records_ : word - kCounterBase;
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t count = recovered_count_;
    if (count > ops_) return broken("count " + std::to_string(count) + " is beyond the image");
    for (uint64_t i = 0; i < count; ++i) {
      const Record& r = record(image, i);
      if (r.key != key_of(i) || r.check != checksum_words(&r.key, 7))
        return broken("record " + std::to_string(i) + " is published but did not persist");
    }
    if (count < at.ops_completed)
      return broken("put " + std::to_string(count) + " returned before the crash but is missing");
    if (count > at.ops_completed + (at.op_in_flight ? 1 : 0)) return broken("the store holds puts never made");
    return Status::success();
  }

 private:
  uint64_t key_of(uint64_t i) const { return payload_word(seed_, i, 99) | 1; }

  std::vector<uint64_t> keys_;    // DRAM: the keys in put order (the volatile index)
  uint64_t durable_records_ = 0;  // DRAM: records known durable
  uint64_t recovered_count_ = 0;  // the record count recover() found
};

const SelfTestDesign<IndexedStore, Bug> registered{"indexed-store", {Bug::dram_count}};

}  // namespace
}  // namespace pmlab::crash::selftest
