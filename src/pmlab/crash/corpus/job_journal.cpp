// corpus.job-journal and its broken twin: a journal of submitted jobs, each one line with a completion
// mark, and a count of submitted jobs. Every third operation completes the oldest pending job; the others
// submit a new one.
//
// Protocol. A submit writes the job, persists it, then raises the count with one atomic store and persists
// it. A completion sets the job's mark with one atomic store and persists it before it returns: once a
// caller is told a job is done, no crash may hand it out again. The count starts at kCounterBase, so the
// stream carries it across 2^32, and the mark holds its code in both halves: either store, had it torn
// (its new low half under its old high half), leaves a word no run writes, which the check refuses.
//
// Twin:
//  - unfenced-ack: a completion writes its mark back but leaves the fence to the next operation's (a
//    group commit of acknowledgements). It returns with the mark in flight; a crash before the next fence
//    brings a job the caller was told is done back as pending: an operation acknowledged before it is
//    durable, a durable-linearizability violation [Durinn] (a durability bug [Agamotto]). Caught in line
//    mode under both domains.
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kDone = in_both_halves(1);

struct alignas(64) Header {
  uint64_t submitted;  // kCounterBase + the jobs submitted
  uint64_t pad[7];
};
struct alignas(64) Job {
  uint64_t seq;  // its index in the journal
  uint64_t payload[5];
  uint64_t check;  // over seq and payload
  uint64_t done;   // kDone once completed, 0 before
};

struct Step {
  bool complete;
  uint64_t job;
};

using Marks = std::vector<uint64_t>;  // per submitted job, its completion mark

enum class Bug { none, unfenced_ack };

class JobJournal final : public HeaderAndRecordsDesign<Bug, Header, Job> {
 public:
  JobJournal(Bug bug, const SubjectOptions& o) : HeaderAndRecordsDesign(bug, o) {
    uint64_t submitted = 0, completed = 0;
    for (uint64_t i = 0; i < ops_; ++i) {
      if (i % 3 == 2 && completed < submitted) plan_.push_back({true, completed++});
      else plan_.push_back({false, submitted++});
    }
  }

  void format(Image image, const persist::Persister& p) override { format_count(image, p, &Header::submitted); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Header* h = header(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      const Step step = plan_[i];
      Job& job = record(image, step.job);
      ops.begin(i, (step.complete ? "complete job " : "submit job ") + std::to_string(step.job));
      if (step.complete) {
        p.store8(&job.done, kDone);
        p.flush(&job.done, 8);
        if (variant_ != Bug::unfenced_ack) p.fence();
      } else {
        job.seq = step.job;
        fill_payload(job.payload, 5, step.job);
        job.check = checksum_words(&job.seq, 6);
        p.persist(&job, sizeof job);
        p.store8(&h->submitted, kCounterBase + step.job + 1);
        p.persist(&h->submitted, 8);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the count and the marks are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t count = header(image)->submitted;
    if (count < kCounterBase)
      return broken("the journal's count reads " + std::to_string(count) + ", below the base it starts from: it tore");
    const uint64_t submitted = count - kCounterBase;
    if (submitted > ops_)
      return broken("the journal counts " + std::to_string(submitted) + " jobs, more than it holds");
    Marks found;
    for (uint64_t j = 0; j < submitted; ++j) {
      const Job& job = record(image, j);
      if (job.seq != j || job.check != checksum_words(&job.seq, 6) || !payload_is(job.payload, 5, j))
        return broken("job " + std::to_string(j) + " is counted but did not persist");
      if (job.done != 0 && job.done != kDone)
        return broken("job " + std::to_string(j) + "'s completion mark reads " + std::to_string(job.done) +
                      ": it tore");
      found.push_back(job.done == kDone ? 1 : 0);
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the jobs and their marks");
  }

 private:
  Marks after(uint64_t ops) const {
    return replay(ops, Marks{}, [this](Marks& marks, uint64_t i) {
      if (plan_[i].complete) marks[plan_[i].job] = 1;
      else marks.push_back(0);
    });
  }

  std::vector<Step> plan_;
};

const CorpusDesign<JobJournal, Bug> registered{"job-journal", {Bug::unfenced_ack}};

}  // namespace
}  // namespace pmlab::crash::corpus
