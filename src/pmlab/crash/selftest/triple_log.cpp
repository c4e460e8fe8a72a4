// selftest.triple-log and its broken twin: a log of three-line records without a commit word. Every line
// of a record carries the record's sequence number and its own checksum; an append writes the three lines
// and persists them with one fence, and recovery scans records until the first that is not whole. A torn
// tail (some of its lines valid) is erased, durably, so a later append cannot mistake old lines for new.
//
// The broken twin repairs one shape of torn tail differently: when only the tail's first line persisted,
// it takes the log's last whole record out of the log (invalidates its last line) while it erases the
// tail, and puts it back afterwards. A crash inside that repair loses a record that was appended before
// the crash. Each append yields exactly eight crash states (three pending lines), and the broken shape is
// always the third of them: a checker that crash-tests the recovery of every Nth state it checks, for N
// dividing eight, never tries it.
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kLinesPerRecord = 3;

struct alignas(64) Line {
  uint64_t seq;  // 1 + the record's index; 0 on an erased or never-written line
  uint64_t part;
  uint64_t payload[5];
  uint64_t check;
};

enum class Bug { none, unsafe_repair };

class TripleLog final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return (ops_ + 1) * kLinesPerRecord * sizeof(Line); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "append record " + std::to_string(i));
      Line* record = line(image, i, 0);
      for (uint64_t part = 0; part < kLinesPerRecord; ++part) write_line(record[part], i, part);
      p.persist(record, kLinesPerRecord * sizeof(Line));
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    uint64_t whole = 0;
    while (whole < ops_ && valid_lines(image, whole) == 0b111) ++whole;
    whole_records_ = whole;
    if (whole < ops_) {
      const unsigned tail = valid_lines(image, whole);
      if (tail != 0) {
        const bool unlink = variant_ == Bug::unsafe_repair && tail == 0b001 && whole > 0;
        Line* last = unlink ? line(image, whole - 1, kLinesPerRecord - 1) : nullptr;
        if (unlink) {
          last->check ^= 1;
          p.persist(&last->check, 8);
        }
        std::memset(line(image, whole, 0), 0, kLinesPerRecord * sizeof(Line));
        p.persist(line(image, whole, 0), kLinesPerRecord * sizeof(Line));
        if (unlink) {
          last->check ^= 1;
          p.persist(&last->check, 8);
        }
      }
    }
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    if (whole_records_ < at.ops_completed)
      return broken("record " + std::to_string(whole_records_) + " was appended before the crash but is missing");
    if (whole_records_ > at.ops_completed + (at.op_in_flight ? 1 : 0))
      return broken("the log holds records never appended");
    if (whole_records_ < ops_ && valid_lines(image, whole_records_) != 0) return broken("recovery left a torn tail");
    return Status::success();
  }

 private:
  static Line* line(Image image, uint64_t record, uint64_t part) {
    return reinterpret_cast<Line*>(image.base) + record * kLinesPerRecord + part;
  }

  void write_line(Line& l, uint64_t record, uint64_t part) const {
    l.seq = record + 1;
    l.part = part;
    fill_payload(l.payload, 5, record * kLinesPerRecord + part);
    l.check = checksum_words(&l.seq, 7);
  }

  // Bit `part` set when that line of the record holds what the append wrote.
  unsigned valid_lines(Image image, uint64_t record) const {
    unsigned bits = 0;
    for (uint64_t part = 0; part < kLinesPerRecord; ++part) {
      const Line& l = *line(image, record, part);
      if (l.seq == record + 1 && l.part == part && l.check == checksum_words(&l.seq, 7) &&
          payload_is(l.payload, 5, record * kLinesPerRecord + part))
        bits |= 1u << part;
    }
    return bits;
  }

  uint64_t whole_records_ = 0;  // recover() found: the whole records the log starts with
};

const SelfTestDesign<TripleLog, Bug> registered{"triple-log", {Bug::unsafe_repair}};

}  // namespace
}  // namespace pmlab::crash::selftest
