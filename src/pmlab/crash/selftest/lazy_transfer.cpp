// selftest.lazy-transfer and its broken twin: bank transfers made durable as an intent (redo) record and
// applied to the balances later. A transfer persists its intent (the two accounts and their new balances,
// so applying it twice is harmless), commits it with one atomic store and returns; the next transfer, or
// recovery, applies the committed intent to both balances, persists them, and only then retires the intent.
// The balances live on lines of their own. The commit word names the transfer its intent holds, counted
// from kCounterBase, so the stream carries it across 2^32 and its stores (committing over 0, retiring to
// 0) change both halves: a commit word that tore (its new low half under its old high half) names no
// intent, and recovery refuses it.
//
// The broken twin's recovery applies the intent and retires it with plain stores and never persists
// either: it leaves a correct picture in the cache, and every check of that picture passes. A crash right
// after recovery persists any subset of those lines, and a retired intent without its balances loses a
// transfer that returned.
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kAccounts = 6;
constexpr uint64_t kOpening = 1000;

struct alignas(64) Intent {
  uint64_t committed;  // kCounterBase + 1 + the transfer it commits; 0 when retired
  uint64_t from, to, from_balance, to_balance;
  uint64_t transfer;  // the transfer it holds
  uint64_t check;     // over from .. transfer
  uint64_t pad;
};
struct alignas(64) Account {
  uint64_t balance;
  uint64_t pad[7];
};
struct Bank {
  Intent intent;
  Account accounts[kAccounts];
};

struct Transfer {
  uint64_t from, to, amount;
};

enum class Bug { none, volatile_repair };

class LazyTransfer final : public FixedLayoutDesign<Bug, Bank> {
 public:
  using FixedLayoutDesign::FixedLayoutDesign;

  void format(Image image, const persist::Persister& p) override {
    std::memset(image.base, 0, image.size);
    for (auto& a : layout(image)->accounts) a.balance = kOpening;
    p.persist(image.base, image.size);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Bank* b = layout(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "transfer " + std::to_string(i));
      (void)apply_committed(b, p, true);
      const Transfer t = transfer(i);
      b->intent.from = t.from;
      b->intent.to = t.to;
      b->intent.from_balance = b->accounts[t.from].balance - t.amount;
      b->intent.to_balance = b->accounts[t.to].balance + t.amount;
      b->intent.transfer = i;
      b->intent.check = checksum_words(&b->intent.from, 5);
      p.persist(&b->intent.from, 48);
      p.store8(&b->intent.committed, commit_word(i));
      p.persist(&b->intent.committed, 8);
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    return apply_committed(layout(image), p, variant_ != Bug::volatile_repair);
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Bank* b = layout(image);
    if (b->intent.committed != 0) return broken("recovery left a committed intent unapplied");
    uint64_t expect[kAccounts], alternative[kAccounts];
    balances_after(at.ops_completed, expect);
    balances_after(at.ops_completed + 1, alternative);
    bool same = true, same_alt = at.op_in_flight;
    for (uint64_t a = 0; a < kAccounts; ++a) {
      same = same && b->accounts[a].balance == expect[a];
      same_alt = same_alt && b->accounts[a].balance == alternative[a];
    }
    if (same || same_alt) return Status::success();
    return broken("balances do not match the " + std::to_string(at.ops_completed) + " transfers that returned");
  }

 private:
  static uint64_t commit_word(uint64_t transfer) { return kCounterBase + 1 + transfer; }

  Transfer transfer(uint64_t i) const {
    const uint64_t from = payload_word(seed_, i, 0) % kAccounts;
    const uint64_t to = (from + 1 + payload_word(seed_, i, 1) % (kAccounts - 1)) % kAccounts;
    return {from, to, 1 + payload_word(seed_, i, 2) % 50};
  }

  void balances_after(uint64_t ops, uint64_t* out) const {
    for (uint64_t a = 0; a < kAccounts; ++a) out[a] = kOpening;
    for (uint64_t i = 0; i < ops && i < ops_; ++i) {
      const Transfer t = transfer(i);
      out[t.from] -= t.amount;
      out[t.to] += t.amount;
    }
  }

  // Applies a committed intent and retires it; `durable` makes the balances durable before the retirement
  // and the retirement durable before returning. A commit word that does not name the whole intent it
  // commits is none a run leaves (the intent is durable before its commit): refused.
  static Status apply_committed(Bank* b, const persist::Persister& p, bool durable) {
    const Intent& in = b->intent;
    if (in.committed == 0) return Status::success();
    if (in.check != checksum_words(&in.from, 5) || in.from >= kAccounts || in.to >= kAccounts ||
        in.committed != commit_word(in.transfer))
      return broken("the commit word reads " + std::to_string(in.committed) + ", which names no whole intent");
    b->accounts[in.from].balance = in.from_balance;
    b->accounts[in.to].balance = in.to_balance;
    if (durable) {
      p.flush(&b->accounts[in.from], 8);
      p.flush(&b->accounts[in.to], 8);
      p.fence();
      p.store8(&b->intent.committed, 0);
      p.persist(&b->intent.committed, 8);
    } else {
      b->intent.committed = 0;
    }
    return Status::success();
  }
};

const SelfTestDesign<LazyTransfer, Bug> registered{"lazy-transfer", {Bug::volatile_repair}};

}  // namespace
}  // namespace pmlab::crash::selftest
