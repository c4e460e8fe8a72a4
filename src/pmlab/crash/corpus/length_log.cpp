// corpus.length-log and its broken twin: a log of one-line checksummed records behind a length word, where
// an append writes the record and the new length back under one fence (one fence per append, not two).
// The length may therefore persist before its record; it is a claim that recovery checks, not a commit.
//
// Protocol. Write the record {seq, payload, checksum}, write it back, store the new length with one
// atomic store and write it back, fence. Recovery validates the records the length claims, in order, and
// if one is not whole it truncates the length to the whole ones with one atomic store and persists it
// before it returns. An append that returned has both durable, so truncation only ever drops the append
// that was in flight. The length counts from kCounterBase, so the stream carries it across 2^32 (and a
// truncation may carry it back): a length that tore (its new low half under its old high half) reads below
// the base or claims more records than the log holds, which no append leaves, and recovery refuses it
// rather than truncate it.
//
// Twin:
//  - trusted-length: recovery takes the length as it finds it. A crash that kept the new length but not
//    its record hands the caller a record that never persisted: post-failure code reading data the
//    pre-failure code never made durable, a cross-failure race [XFDetector]. Caught in line mode under
//    both domains.
#include <algorithm>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

struct alignas(64) Header {
  uint64_t length;  // kCounterBase + the records claimed
  uint64_t pad[7];
};
struct alignas(64) Record {
  uint64_t seq;
  uint64_t payload[6];
  uint64_t check;
};

enum class Bug { none, trusted_length };

class LengthLog final : public HeaderAndRecordsDesign<Bug, Header, Record> {
 public:
  using HeaderAndRecordsDesign::HeaderAndRecordsDesign;

  void format(Image image, const persist::Persister& p) override { format_count(image, p, &Header::length); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Header* h = header(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "append record " + std::to_string(i));
      Record& r = record(image, i);
      r.seq = i;
      fill_payload(r.payload, 6, i);
      r.check = checksum_words(&r.seq, 7);
      p.flush(&r, sizeof r);
      p.store8(&h->length, kCounterBase + i + 1);
      p.flush(&h->length, 8);
      p.fence();
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    Header* h = header(image);
    if (variant_ != Bug::trusted_length) {
      const uint64_t claimed = h->length - kCounterBase;
      if (h->length < kCounterBase || claimed > ops_)
        return broken("the length reads " + std::to_string(h->length) + ": no append leaves it (it tore)");
      uint64_t whole = 0;
      while (whole < claimed && intact(record(image, whole), whole)) ++whole;
      if (whole != claimed) {
        p.store8(&h->length, kCounterBase + whole);
        p.persist(&h->length, 8);
      }
    }
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t word = header(image)->length;
    if (word < kCounterBase)
      return broken("the length reads " + std::to_string(word) + ", below the base it starts from: it tore");
    const uint64_t length = word - kCounterBase;
    if (length > ops_) return broken("the log claims " + std::to_string(length) + " records, more than were appended");
    for (uint64_t i = 0; i < length; ++i)
      if (!intact(record(image, i), i))
        return broken("record " + std::to_string(i) + " is in the log but never persisted");
    return durably_linearizable(
        length, at, [this](uint64_t k) { return std::min(k, ops_); }, "the log's length");
  }

 private:
  bool intact(const Record& r, uint64_t i) const {
    return r.seq == i && r.check == checksum_words(&r.seq, 7) && payload_is(r.payload, 6, i);
  }
};

const CorpusDesign<LengthLog, Bug> registered{"length-log", {Bug::trusted_length}};

}  // namespace
}  // namespace pmlab::crash::corpus
