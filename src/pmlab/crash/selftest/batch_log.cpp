// selftest.batch-log and its broken twin: a log written in batches of eight two-line records. A batch
// writes a header line (batches begun), its records (a head and a tail line each, interleaved), and an
// index line (records begun) at the far end of the image; it flushes all eighteen lines, fences once, then
// commits with an 8-byte count of batches and persists it. The three counts start at kCounterBase, so the
// stream carries each across 2^32: a count that tore (its new low half under its old high half) reads below
// the base, and the check refuses it.
//
// The broken twin's recovery tries to salvage a batch that was written but not committed: if all eight
// heads of the batch after the committed ones are whole while both bookkeeping lines still describe the
// committed state, it concludes the bookkeeping was lost and rolls the count forward, by two batches
// instead of one. The bug needs one particular subset of the eighteen pending lines: the eight heads
// persisted and the two bookkeeping lines not, whatever the tails did. It is neither a prefix nor a suffix
// of the lines in address or write order, and it is two lines away from "all persisted".
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kRecords = 8;

struct alignas(64) Line {
  uint64_t tag;  // 1 + batch * 64 + record * 2 + (0 head, 1 tail); 0 when never written
  uint64_t payload[6];
  uint64_t check;
};
struct alignas(64) Word {
  uint64_t value;
  uint64_t pad[7];
};
struct Front {
  Word commit;  // kCounterBase + batches committed
  Word header;  // kCounterBase + batches begun
};

enum class Bug { none, salvage };

class BatchLog final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override {
    return sizeof(Front) + (ops_ + 1) * 2 * kRecords * sizeof(Line) + sizeof(Word);
  }

  void format(Image image, const persist::Persister& p) override {
    Design::format(image, p);
    front(image)->commit.value = front(image)->header.value = index_word(image)->value = kCounterBase;
    p.persist(front(image), sizeof(Front));
    p.persist(index_word(image), sizeof(Word));
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Front* f = front(image);
    Word* index = index_word(image);
    for (uint64_t b = 0; b < ops_; ++b) {
      ops.begin(b, "append batch " + std::to_string(b));
      p.store8(&f->header.value, kCounterBase + b + 1);
      for (uint64_t r = 0; r < kRecords; ++r) {
        write_line(*line(image, b, r, 0), b, r, 0);
        write_line(*line(image, b, r, 1), b, r, 1);
      }
      p.store8(&index->value, kCounterBase + (b + 1) * kRecords);
      p.flush(&f->header, sizeof(Word));
      p.flush(line(image, b, 0, 0), 2 * kRecords * sizeof(Line));
      p.flush(index, sizeof(Word));
      p.fence();
      p.store8(&f->commit.value, kCounterBase + b + 1);
      p.persist(&f->commit.value, 8);
      ops.end(b);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    Front* f = front(image);
    uint64_t committed = f->commit.value - kCounterBase;  // below the base it wraps; check() refuses that word
    if (variant_ == Bug::salvage && committed < ops_ && f->header.value == kCounterBase + committed &&
        index_word(image)->value == kCounterBase + committed * kRecords) {
      bool heads = true;
      for (uint64_t r = 0; r < kRecords && heads; ++r) heads = valid(*line(image, committed, r, 0), committed, r, 0);
      if (heads) {
        p.store8(&f->commit.value, kCounterBase + committed + 2);
        p.persist(&f->commit.value, 8);
        committed += 2;
      }
    }
    committed_batches_ = committed;
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Front* f = front(image);
    const uint64_t begun = f->header.value, records = index_word(image)->value;
    if (f->commit.value < kCounterBase || begun < kCounterBase || records < kCounterBase)
      return broken("a count reads below the base it starts from (commit " + std::to_string(f->commit.value) +
                    ", header " + std::to_string(begun) + ", index " + std::to_string(records) + "): it tore");
    const uint64_t committed = committed_batches_;
    if (committed < at.ops_completed)
      return broken("batch " + std::to_string(committed) + " committed before the crash is missing");
    if (committed > at.ops_completed + (at.op_in_flight ? 1 : 0))
      return broken("the commit count " + std::to_string(committed) + " includes batches never appended");
    // The bookkeeping is durable with the batch it describes, so it never claims less than is committed.
    if (begun - kCounterBase < committed || records - kCounterBase < committed * kRecords)
      return broken("the bookkeeping lines describe fewer batches than the " + std::to_string(committed) +
                    " committed");
    for (uint64_t b = 0; b < committed; ++b)
      for (uint64_t r = 0; r < kRecords; ++r)
        if (!valid(*line(image, b, r, 0), b, r, 0) || !valid(*line(image, b, r, 1), b, r, 1))
          return broken("batch " + std::to_string(b) + " is committed but record " + std::to_string(r) +
                        " did not persist");
    return Status::success();
  }

 private:
  static Front* front(Image image) { return reinterpret_cast<Front*>(image.base); }
  static Word* index_word(Image image) { return reinterpret_cast<Word*>(image.base + image.size - sizeof(Word)); }
  static Line* line(Image image, uint64_t batch, uint64_t record, uint64_t part) {
    return reinterpret_cast<Line*>(image.base + sizeof(Front)) + (batch * kRecords + record) * 2 + part;
  }
  static uint64_t tag(uint64_t batch, uint64_t record, uint64_t part) { return 1 + batch * 64 + record * 2 + part; }

  void write_line(Line& l, uint64_t batch, uint64_t record, uint64_t part) const {
    l.tag = tag(batch, record, part);
    fill_payload(l.payload, 6, l.tag);
    l.check = checksum_words(&l.tag, 7);
  }
  bool valid(const Line& l, uint64_t batch, uint64_t record, uint64_t part) const {
    return l.tag == tag(batch, record, part) && l.check == checksum_words(&l.tag, 7) &&
           l.payload[0] == payload_word(seed_, l.tag, 0);
  }

  uint64_t committed_batches_ = 0;  // the batches recover() found committed (after the twin's salvage)
};

const SelfTestDesign<BatchLog, Bug> registered{"batch-log", {Bug::salvage}};

}  // namespace
}  // namespace pmlab::crash::selftest
