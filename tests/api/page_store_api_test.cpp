// pmlab::PageStore as a user's buffer pool sees it: whole pages and byte ranges written failure-atomically,
// found again after reopening under every flush, lanes writing in parallel, and misuse refused.
#include <pmlab/page_store.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

class PageStoreApi : public ::testing::TestWithParam<pmlab::PageFlush> {
 protected:
  TempDir dir_;
};

TEST_P(PageStoreApi, WritesAndUpdatesSurviveReopening) {
  const std::string path = dir_.file("pages");
  std::vector<std::byte> page(4096), back(4096);
  {
    auto store = pmlab::PageStore::create(path, {.page_size = 4096, .pages = 8, .lanes = 1}, GetParam());
    EXPECT_EQ(store.pages(), 8u);
    EXPECT_EQ(store.flush(), GetParam());
    store.read(3, back.data());
    EXPECT_EQ(back, std::vector<std::byte>(4096)) << "a new page is zero-filled";
    const uint64_t first = store.version(3);
    for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<std::byte>(i * 7);
    store.write(0, 3, page.data());
    EXPECT_EQ(store.version(3), first + 1);
    store.write(0, 3, page.data());
    EXPECT_EQ(store.version(3), first + 1) << "an unchanged page is not written again";
    store.update(0, 5, 100, "hello", 5);
    store.update(0, 5, 4090, "edge!", 5);
  }
  auto store = pmlab::PageStore::open(path, GetParam());
  store.read(3, back.data());
  EXPECT_EQ(back, page);
  store.read(5, back.data());
  EXPECT_EQ(std::memcmp(back.data() + 100, "hello", 5), 0);
  EXPECT_EQ(std::memcmp(back.data() + 4090, "edge!", 5), 0);
  EXPECT_EQ(back[99], std::byte{0});
  EXPECT_EQ(store.recovery().ulogs_torn, 0u);
}

TEST_P(PageStoreApi, ConcurrentLanesWriteTheirOwnPages) {
  auto store = pmlab::PageStore::create(dir_.file("pages"), {.page_size = 4096, .pages = 16, .lanes = 2}, GetParam());
  std::vector<std::thread> writers;
  for (unsigned lane = 0; lane < 2; ++lane)
    writers.emplace_back([&, lane] {
      std::vector<std::byte> page(4096);
      for (int round = 1; round <= 20; ++round)
        for (uint64_t pid = lane; pid < 16; pid += 2) {
          std::memset(page.data(), round, 64 * (1 + pid % 4));
          store.write(lane, pid, page.data());
        }
    });
  for (auto& w : writers) w.join();
  std::vector<std::byte> back(4096);
  for (uint64_t pid = 0; pid < 16; ++pid) {
    store.read(pid, back.data());
    EXPECT_EQ(back[0], std::byte{20}) << pid;
    EXPECT_EQ(back[64 * (1 + pid % 4) - 1], std::byte{20}) << pid;
  }
}

INSTANTIATE_TEST_SUITE_P(Flushes, PageStoreApi,
                         ::testing::Values(pmlab::PageFlush::cow, pmlab::PageFlush::ulog, pmlab::PageFlush::hybrid),
                         [](const auto& flush) {
                           return std::string(flush.param == pmlab::PageFlush::cow    ? "cow"
                                              : flush.param == pmlab::PageFlush::ulog ? "ulog"
                                                                                      : "hybrid");
                         });

TEST(PageStoreApiErrors, BadPagesLanesRangesAndPoolsAreRefused) {
  TempDir dir;
  std::vector<std::byte> page(4096);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::create(dir.file("a"), {.page_size = 4096, .pages = 0}); }),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::create(dir.file("b"), {.page_size = 5000, .pages = 4}); }),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::create(dir.file("c"), {.page_size = 4096, .pages = 4, .lanes = 0}); }),
            PMLAB_E_INVALID_ARGUMENT);
  auto store = pmlab::PageStore::create(dir.file("pages"), {.page_size = 4096, .pages = 4}, pmlab::PageFlush::ulog);
  EXPECT_EQ(code_of([&] { store.write(1, 0, page.data()); }), PMLAB_E_INVALID_ARGUMENT);  // one lane: 0
  EXPECT_EQ(code_of([&] { store.write(0, 4, page.data()); }), PMLAB_E_INVALID_ARGUMENT);  // pages 0..3
  EXPECT_EQ(code_of([&] { store.update(0, 0, 4090, "too long", 8); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { store.read(9, page.data()); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::open(dir.file("pages")); }), PMLAB_E_BUSY);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::create(dir.file("pages"), {.page_size = 4096, .pages = 4}); }),
            PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::open(dir.file("absent")); }), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(code_of([&] { pmlab::PageStore::open(dir.file("pages"), pmlab::PageFlush{9}); }), PMLAB_E_INVALID_ARGUMENT);
}

}  // namespace
