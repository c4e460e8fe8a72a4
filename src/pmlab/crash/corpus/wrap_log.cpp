// corpus.wrap-log and its broken twin: a circular log of variable-length records in a ring of 48 words,
// with a persisted head and tail (logical word offsets, so a record may wrap around the ring's end).
//
// Protocol. A record is [1 + seq][length][payload…][checksum], 5 to 11 words. An append writes the record
// at the tail, in one or two segments (the second at the ring's start when it wraps), writes both back and
// fences, then advances the tail with one atomic store and persists it. When the next record does not fit,
// the operation is a trim instead: it advances the head past the oldest record with one atomic store and
// persists it, so the space a later append overwrites is never still inside the log. Head and tail start at
// kCounterBase, so the stream carries both across 2^32: a head or tail that tore (its new low half under
// its old high half) does not bound a log with the other, and the check refuses it.
//
// Twin:
//  - unflushed-wrap: the append writes back only the first segment, from the tail to the ring's end. A
//    record that wraps is published with its wrapped words still in the cache, and a crash loses them
//    under a tail that names them: a missing flush [Agamotto], one that only the wrap-around shape has.
//    Caught under ADR in line mode.
#include <algorithm>
#include <deque>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kRingWords = 48;
constexpr uint64_t kMinRecord = 5, kMaxRecord = 11;

struct alignas(64) Ends {
  uint64_t head;  // logical word offset of the oldest record
  uint64_t tail;  // logical word offset where the next record goes
  uint64_t pad[6];
};
struct Log {
  Ends ends;
  uint64_t ring[kRingWords];
};

struct Step {
  bool trim;  // advance the head past record `seq`; else append record `seq`
  uint64_t seq;
};

struct Contents {
  uint64_t head = kCounterBase, tail = kCounterBase;  // an empty log
  std::vector<uint64_t> seqs;                         // the records between head and tail, oldest first
  bool operator==(const Contents&) const = default;
};

enum class Bug { none, unflushed_wrap };

class WrapLog final : public FixedLayoutDesign<Bug, Log> {
 public:
  WrapLog(Bug bug, const SubjectOptions& o) : FixedLayoutDesign(bug, o) {
    Contents c;
    std::deque<uint64_t> live;
    uint64_t next = 0;
    for (uint64_t i = 0; i < ops_; ++i) {
      if (c.tail + length(next) - c.head > kRingWords) {
        plan_.push_back({true, live.front()});
        c.head += length(live.front());
        live.pop_front();
      } else {
        plan_.push_back({false, next});
        c.tail += length(next);
        live.push_back(next++);
      }
    }
  }

  void format(Image image, const persist::Persister& p) override {
    Design::format(image, p);
    Ends& ends = layout(image)->ends;
    ends.head = ends.tail = kCounterBase;
    p.persist(&ends, sizeof ends);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Log* log = layout(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      const Step step = plan_[i];
      ops.begin(i, (step.trim ? "trim record " : "append record ") + std::to_string(step.seq));
      if (step.trim) {
        p.store8(&log->ends.head, log->ends.head + length(step.seq));
        p.persist(&log->ends.head, 8);
      } else {
        const std::vector<uint64_t> words = record(step.seq);
        const uint64_t at = ring_index(log->ends.tail);
        const uint64_t first = std::min<uint64_t>(words.size(), kRingWords - at);
        for (uint64_t k = 0; k < words.size(); ++k) log->ring[ring_index(log->ends.tail + k)] = words[k];
        p.flush(&log->ring[at], first * 8);
        if (first < words.size() && variant_ != Bug::unflushed_wrap) p.flush(&log->ring[0], (words.size() - first) * 8);
        p.fence();
        p.store8(&log->ends.tail, log->ends.tail + words.size());
        p.persist(&log->ends.tail, 8);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: head and tail are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Log* log = layout(image);
    Contents found{log->ends.head, log->ends.tail, {}};
    if (found.head > found.tail || found.tail - found.head > kRingWords)
      return broken("head " + std::to_string(found.head) + " and tail " + std::to_string(found.tail) +
                    " do not bound a log");
    for (uint64_t pos = found.head; pos < found.tail;) {
      const uint64_t len = log->ring[ring_index(pos + 1)];
      if (len < kMinRecord || len > kMaxRecord || pos + len > found.tail)
        return broken("the record at " + std::to_string(pos) +
                      " is inside the log but did not persist (its length reads " + std::to_string(len) + " words)");
      std::vector<uint64_t> words(len);
      for (uint64_t k = 0; k < len; ++k) words[k] = log->ring[ring_index(pos + k)];
      const uint64_t seq = words[0] - 1;
      if (seq >= ops_ || words != record(seq))
        return broken("the record at " + std::to_string(pos) + " is inside the log but did not persist");
      found.seqs.push_back(seq);
      pos += len;
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the log between head and tail");
  }

 private:
  // Where logical offset `pos` lies in the ring: the log's first word, at kCounterBase, is the ring's first.
  static uint64_t ring_index(uint64_t pos) { return (pos - kCounterBase) % kRingWords; }
  uint64_t length(uint64_t seq) const {
    return kMinRecord + payload_word(seed_, seq, 99) % (kMaxRecord - kMinRecord + 1);
  }

  std::vector<uint64_t> record(uint64_t seq) const {
    std::vector<uint64_t> words(length(seq));
    words[0] = seq + 1;
    words[1] = words.size();
    fill_payload(&words[2], words.size() - 3, seq);
    words.back() = checksum_words(words.data(), words.size() - 1);
    return words;
  }

  Contents after(uint64_t ops) const {
    Contents c;
    std::deque<uint64_t> live;
    for (uint64_t i = 0; i < ops && i < ops_; ++i) {
      if (plan_[i].trim) {
        c.head += length(live.front());
        live.pop_front();
      } else {
        c.tail += length(plan_[i].seq);
        live.push_back(plan_[i].seq);
      }
    }
    c.seqs.assign(live.begin(), live.end());
    return c;
  }

  std::vector<Step> plan_;
};

const CorpusDesign<WrapLog, Bug> registered{"wrap-log", {Bug::unflushed_wrap}};

}  // namespace
}  // namespace pmlab::crash::corpus
