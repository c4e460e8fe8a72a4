// Crash subjects page.cow, page.ulog, page.hybrid: flushes of 1 … 64 dirty lines of three 4 KiB pages
// through two lanes, checked against the contract: after recovery every page is wholly the version its
// last returned flush wrote, except the page of the flush in flight, which is wholly that version or
// wholly the new one; and the recovered store flushes and recovers again.
//
// page.hybrid uses a fixed crossover (micro-log below 16 dirty lines) and no online refinement instead of
// timing the machine, so the same page goes through both protocols in turn and the crash states do not
// depend on timing.
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::primitives::page {
namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint64_t kPages = 3;
constexpr uint32_t kLanes = 2;
constexpr uint32_t kLines = kPageSize / kLineBytes;
constexpr double kHybridCrossover = 16;
constexpr std::array<uint32_t, 7> kDirty{1, 2, 3, 8, 16, 40, 64};

struct Flush {
  uint64_t pid;
  uint32_t lane;
  std::vector<uint32_t> lines;
};

Flush flush_of(uint64_t seed, uint64_t op) {
  Flush f;
  f.pid = (op * 7 + seed) % kPages;
  f.lane = static_cast<uint32_t>(op % kLanes);
  const uint32_t d = kDirty[(op + seed) % kDirty.size()];
  for (uint32_t j = 0; j < d; ++j) f.lines.push_back(static_cast<uint32_t>((j * kLines / d + op) % kLines));
  return f;
}

// What op writes into a line: every word names the op and the line, so a mixed line shows.
// Every word of every version holds exactly 32 one bits (a random half and its complement): a micro-log
// record that validates by counting bits cannot tell a line of another version from the right one, so a
// stale line left in a recycled buffer is the adversary it must be protected from by the recycling itself.
void fill_line(std::byte* line, uint64_t op, uint32_t index) {
  for (uint32_t w = 0; w < kLineBytes / 8; ++w) {
    const auto half = static_cast<uint32_t>(mix64((op + 1) * 0x9e3779b97f4a7c15ULL ^ uint64_t{index} << 8 ^ w));
    const uint64_t v = uint64_t{half} | uint64_t{~half} << 32;
    std::memcpy(line + w * 8, &v, 8);
  }
}

using Pages = std::vector<std::vector<std::byte>>;

// The pages as ops [0, n) leave them (pages start zeroed).
Pages model(uint64_t seed, uint64_t n) {
  Pages pages(kPages, std::vector<std::byte>(kPageSize));
  for (uint64_t op = 0; op < n; ++op) {
    const Flush f = flush_of(seed, op);
    for (uint32_t line : f.lines) fill_line(pages[f.pid].data() + line * kLineBytes, op, line);
  }
  return pages;
}

std::unique_ptr<PageFlusher> make(Policy policy, PageStore& store) {
  switch (policy) {
    case Policy::cow: return std::make_unique<CowFlusher>(store);
    case Policy::ulog: return std::make_unique<MicroLogFlusher>(store);
    case Policy::hybrid:
      return std::make_unique<HybridFlusher>(store, FlushCostModel::fixed(kHybridCrossover), Refinement::model);
  }
  return nullptr;
}

class PageSubject final : public crash::Subject {
 public:
  PageSubject(Policy policy, const crash::SubjectOptions& o) : policy_(policy), ops_(o.ops), seed_(o.seed) {}

  size_t image_bytes() const override { return PageStore::region_bytes({kPageSize, kPages, kLanes}).value(); }

  void format(crash::Image image, const persist::Persister& p) override {
    auto store = PageStore::format({image.base, image.size}, p, {kPageSize, kPages, kLanes});
    if (!store) throw std::runtime_error("page store format: " + store.status().message());
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    auto store = PageStore::open({image.base, image.size}, p);
    if (!store) throw std::runtime_error("page store open: " + store.status().message());
    std::vector<PageStore::Lane> lanes;
    for (uint32_t l = 0; l < kLanes; ++l) lanes.push_back(std::move((*store)->claim_lane().value()));
    auto flusher = make(policy_, **store);
    DramPage page(kPageSize);
    for (uint64_t op = 0; op < ops_; ++op) {
      const Flush f = flush_of(seed_, op);
      if (Status s = (*store)->read(f.pid, page); !s) throw std::runtime_error(s.message());
      for (uint32_t line : f.lines) {
        fill_line(page.data() + line * kLineBytes, op, line);
        page.mark_dirty(line);
      }
      ops.begin(op, "flush page " + std::to_string(f.pid) + " (" + std::to_string(f.lines.size()) +
                        " dirty lines) through lane " + std::to_string(f.lane));
      if (Status s = flusher->flush(lanes[f.lane], page); !s) throw std::runtime_error("flush: " + s.message());
      ops.end(op);
    }
  }

  // Opening the store is its recovery; the store it opened is kept for the check.
  Status recover(crash::Image image, const persist::Persister& p) override {
    auto store = PageStore::open({image.base, image.size}, p);
    if (!store) return error(Errc::failed, "recovery failed: " + store.status().message());
    recovered_store_ = std::move(*store);
    return Status::success();
  }

  Status check(crash::Image image, const persist::Persister& p, const crash::CrashPoint& at) override {
    const Pages returned = model(seed_, at.ops_completed);
    const bool in_flight = at.op_in_flight && at.ops_completed < ops_;
    const Pages with_flying = in_flight ? model(seed_, at.ops_completed + 1) : returned;
    for (uint64_t pid = 0; pid < kPages; ++pid) {
      const auto bytes = recovered_store_->page_bytes(pid);
      const bool old_version = std::memcmp(bytes.data(), returned[pid].data(), kPageSize) == 0;
      const bool new_version = std::memcmp(bytes.data(), with_flying[pid].data(), kPageSize) == 0;
      if (old_version || new_version) continue;
      uint32_t line = 0;
      while (line < kLines &&
             std::memcmp(bytes.data() + line * kLineBytes, returned[pid].data() + line * kLineBytes, kLineBytes) == 0 &&
             std::memcmp(bytes.data() + line * kLineBytes, with_flying[pid].data() + line * kLineBytes, kLineBytes) ==
                 0)
        ++line;
      return error(Errc::failed, "page " + std::to_string(pid) +
                                     " is neither its last returned version nor the one "
                                     "in flight (first differing line " +
                                     std::to_string(line) + ")");
    }
    // The recovered store goes on: a flush through each lane survives another recovery.
    std::vector<PageStore::Lane> lanes;
    for (uint32_t l = 0; l < kLanes; ++l) {
      auto lane = recovered_store_->claim_lane();
      if (!lane) return error(Errc::failed, "after recovery: " + lane.status().message());
      lanes.push_back(std::move(*lane));
    }
    auto flusher = make(policy_, *recovered_store_);
    DramPage page(kPageSize);
    std::vector<std::vector<std::byte>> expect;
    for (uint32_t l = 0; l < kLanes; ++l) {
      const uint64_t pid = l % kPages;
      if (Status s = recovered_store_->read(pid, page); !s) return s;
      for (uint32_t line : {l, 40u + l}) {
        fill_line(page.data() + line * kLineBytes, ops_ + 100 + l, line);
        page.mark_dirty(line);
      }
      expect.emplace_back(page.data(), page.data() + kPageSize);
      if (Status s = flusher->flush(lanes[l], page); !s)
        return error(Errc::failed, "flush after recovery: " + s.message());
    }
    lanes.clear();
    flusher.reset();
    recovered_store_.reset();
    auto again = PageStore::open({image.base, image.size}, p);
    if (!again) return error(Errc::failed, "second recovery failed: " + again.status().message());
    for (uint32_t l = 0; l < kLanes; ++l)
      if (std::memcmp((*again)->page_bytes(l % kPages).data(), expect[l].data(), kPageSize) != 0)
        return error(Errc::failed, "a flush after recovery was lost by the next recovery");
    return Status::success();
  }

 private:
  Policy policy_;
  uint64_t ops_;
  uint64_t seed_;
  std::unique_ptr<PageStore> recovered_store_;  // what recover() opened; check() goes on with it
};

crash::SubjectInfo info(Policy policy, const char* description) {
  crash::SubjectInfo i;
  i.name = std::string("page.") + to_string(policy);
  i.description = description;
  i.make = [policy](const crash::SubjectOptions& o) { return std::make_unique<PageSubject>(policy, o); };
  return i;
}

const crash::SubjectRegistration cow{info(
    Policy::cow, "copy-on-write page flushes (whole page to a spare slot, then page id + version), 3 pages, 2 lanes")};
const crash::SubjectRegistration ulog{
    info(Policy::ulog,
         "micro-log page flushes (a self-validating record of the dirty lines, then in place), 3 pages, 2 lanes")};
const crash::SubjectRegistration hybrid{
    info(Policy::hybrid,
         "hybrid page flushes with a fixed crossover of 16 dirty lines, so pages alternate between "
         "copy-on-write and micro-log")};

}  // namespace
}  // namespace pmlab::primitives::page
