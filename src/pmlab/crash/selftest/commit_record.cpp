// selftest.commit-record and its broken twins: the simplest failure-atomic publish protocol, write a
// record, make it durable, then publish it with an 8-byte commit word. The broken variants each drop
// one rule the protocol depends on; the simulator must catch every one and pass the correct design.
// The commit word counts from kCounterBase, so the stream carries it across 2^32 and a commit word that
// tore (its new low half under its old high half) reads below the base, where the check sees it.
// Two variants write during recovery, for the crash-during-recovery check: one stamps a recovery count
// (safe at any crash; the count is kept in both halves of its word, so every stamp changes both and a torn
// one has halves that disagree), the other takes the commit word down while it re-validates the records
// and puts it back afterwards (a crash in between loses every published record).
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

enum class Bug {
  none,
  missing_flush,    // the record is never written back before the commit (ADR)
  missing_fence,    // record and commit are written back, but one fence orders nothing between them (ADR)
  torn_commit,      // the commit is two words written with plain stores: only 8-byte stores are atomic
  eadr_no_fence,    // under eADR, no fence at all: stores may still be in flight when the operation returns
  unsafe_recovery,  // correct run; recovery zeroes the commit word, re-validates, then restores it
};

enum class Recovery { reads_only, stamps };

struct Record {
  uint64_t seq;
  uint64_t payload[14];
  uint64_t checksum;
};
static_assert(sizeof(Record) == 128);

struct alignas(64) Header {
  uint64_t count;       // kCounterBase + the records published
  uint64_t check;       // ~count, written only by the torn_commit variant
  uint64_t recoveries;  // in both halves: the recoveries that stamped the image (Recovery::stamps only)
  uint64_t pad[5];
};

uint64_t checksum(const Record& r) { return checksum_words(&r.seq, 15); }

class CommitRecord final : public HeaderAndRecordsDesign<Bug, Header, Record> {
 public:
  CommitRecord(Bug bug, Recovery recovery, const SubjectOptions& o)
      : HeaderAndRecordsDesign(bug, o), recovery_(recovery) {}

  void format(Image image, const persist::Persister& p) override { format_count(image, p, &Header::count); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Header* h = header(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "publish record " + std::to_string(i));
      Record& r = record(image, i);
      r.seq = i;
      fill_payload(r.payload, 14, i);
      r.checksum = checksum(r);
      const uint64_t published = kCounterBase + i + 1;
      switch (variant_) {
        case Bug::none:
        case Bug::unsafe_recovery:
          p.persist(&r, sizeof r);
          p.store8(&h->count, published);
          p.persist(&h->count, 8);
          break;
        case Bug::missing_flush:
          p.store8(&h->count, published);
          p.persist(&h->count, 8);
          break;
        case Bug::missing_fence:
          p.flush(&r, sizeof r);
          p.store8(&h->count, published);
          p.flush(&h->count, 8);
          p.fence();
          break;
        case Bug::torn_commit:
          p.persist(&r, sizeof r);
          h->count = published;
          h->check = ~published;
          p.persist(h, 16);
          break;
        case Bug::eadr_no_fence: p.store8(&h->count, published); break;
      }
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    Header* h = header(image);
    if (recovery_ == Recovery::stamps) {
      p.store8(&h->recoveries, h->recoveries + in_both_halves(1));
      p.persist(&h->recoveries, 8);
    }
    if (variant_ == Bug::unsafe_recovery) {
      const uint64_t published = h->count;
      p.store8(&h->count, kCounterBase);
      p.persist(&h->count, 8);
      p.store8(&h->count, published);
      p.persist(&h->count, 8);
    }
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Header* h = header(image);
    if (variant_ == Bug::torn_commit && h->count != kCounterBase && h->check != ~h->count)
      return error(Errc::failed, "commit is torn: count " + std::to_string(h->count) + " but its check word says " +
                                     std::to_string(~h->check));
    if (h->count < kCounterBase)
      return error(Errc::failed, "the commit word reads " + std::to_string(h->count) +
                                     ", below the base its count starts from: it tore");
    if (recovery_ == Recovery::stamps && (h->recoveries == 0 || !halves_agree(h->recoveries)))
      return error(Errc::failed, "the recovery stamp reads " + std::to_string(h->recoveries) +
                                     ": not a count of recoveries in both halves (torn, or never stamped)");
    const uint64_t count = h->count - kCounterBase;
    const uint64_t started = at.ops_completed + (at.op_in_flight ? 1 : 0);
    if (count < at.ops_completed)
      return error(Errc::failed, "record " + std::to_string(count) +
                                     " was published before the crash but is missing (count " + std::to_string(count) +
                                     ", " + std::to_string(at.ops_completed) + " operations returned)");
    if (count > started)
      return error(Errc::failed, "count " + std::to_string(count) + " includes records never published (" +
                                     std::to_string(started) + " operations started)");
    for (uint64_t i = 0; i < count; ++i) {
      const Record& r = record(image, i);
      if (r.seq != i || r.checksum != checksum(r) || !payload_is(r.payload, 14, i))
        return error(Errc::failed, "record " + std::to_string(i) + " is published but its data did not persist");
    }
    return Status::success();
  }

 private:
  const Recovery recovery_;
};

using persist::Domain;
const std::vector<Domain> kAdr{Domain::adr}, kEadr{Domain::eadr};
const SubjectRegistration correct{variant<CommitRecord>(
    "selftest.commit-record", "record, persist, 8-byte commit word, persist (the correct protocol)", false,
    kBothDomains, Bug::none, Recovery::reads_only)};
const SubjectRegistration stamping{variant<CommitRecord>(
    "selftest.commit-record-stamp", "the correct protocol, whose recovery also persists a recovery count", false,
    kBothDomains, Bug::none, Recovery::stamps)};
const SubjectRegistration unsafe_recovery{variant<CommitRecord>(
    "selftest.broken.unsafe-recovery", "recovery takes the commit word down while it re-validates", true, kBothDomains,
    Bug::unsafe_recovery, Recovery::reads_only)};
const SubjectRegistration missing_flush{variant<CommitRecord>("selftest.broken.missing-flush",
                                                              "publishes a record that was never flushed", true, kAdr,
                                                              Bug::missing_flush, Recovery::reads_only)};
const SubjectRegistration missing_fence{variant<CommitRecord>("selftest.broken.missing-fence",
                                                              "no fence between the record's flush and the commit",
                                                              true, kAdr, Bug::missing_fence, Recovery::reads_only)};
const SubjectRegistration torn_commit{
    variant<CommitRecord>("selftest.broken.torn-commit", "commit spread over two words written with plain stores", true,
                          kBothDomains, Bug::torn_commit, Recovery::reads_only)};
const SubjectRegistration eadr_no_fence{variant<CommitRecord>(
    "selftest.broken.eadr-no-fence", "eADR design without its fence: operations return with stores in flight", true,
    kEadr, Bug::eadr_no_fence, Recovery::reads_only)};

}  // namespace
}  // namespace pmlab::crash::selftest
