// The C API's pools of one's own layout and page store, as a C program uses them: persisted words found
// after reopening, pages written whole and in part, and bad input refused with its code (an enum member
// outside its enumerators included, as C allows one).
#include <pmlab/pmlab.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::TempDir;

TEST(CPoolApi, AWordPersistedThroughThePoolIsThereAfterReopening) {
  TempDir dir;
  const std::string path = dir.file("mine");
  pmlab_pool* pool = nullptr;
  ASSERT_EQ(pmlab_pool_create(path.c_str(), 1 << 20, "mine.c", 2, nullptr, &pool), PMLAB_OK) << pmlab_errormsg();
  ASSERT_GE(pmlab_pool_data_size(pool), 512u << 10);
  auto* words = static_cast<uint64_t*>(pmlab_pool_data(pool));
  std::memcpy(words + 8, "payload!", 8);
  ASSERT_EQ(pmlab_pool_flush(pool, words + 8, 8), PMLAB_OK);
  ASSERT_EQ(pmlab_pool_fence(pool), PMLAB_OK);
  ASSERT_EQ(pmlab_pool_store8(pool, &words[0], 42), PMLAB_OK);
  ASSERT_EQ(pmlab_pool_persist(pool, &words[0], 8), PMLAB_OK);
  EXPECT_EQ(pmlab_pool_persist(nullptr, &words[0], 8), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_store8(pool, nullptr, 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_fence(nullptr), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_data(nullptr), nullptr);
  // Ranges outside the data area and a misaligned commit word are refused, having done nothing.
  const uint64_t size = pmlab_pool_data_size(pool);
  auto* bytes = static_cast<char*>(pmlab_pool_data(pool));
  uint64_t dram = 0;
  EXPECT_EQ(pmlab_pool_flush(pool, &dram, 8), PMLAB_E_INVALID_ARGUMENT);
  const bool below = reinterpret_cast<uintptr_t>(&dram) < reinterpret_cast<uintptr_t>(bytes);
  EXPECT_NE(std::string(pmlab_errormsg()).find(below ? "lie before the pool's" : "outside the pool's"),
            std::string::npos)
      << pmlab_errormsg();
  EXPECT_EQ(pmlab_pool_persist(pool, bytes - 64, 64), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pmlab_errormsg()).find("64 bytes at 0x"), std::string::npos) << pmlab_errormsg();
  EXPECT_EQ(pmlab_pool_persist(pool, bytes, size + 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_persist(pool, bytes + size - 8, SIZE_MAX), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_persist(pool, bytes + size - 64, 64), PMLAB_OK) << "the last line is the pool's";
  EXPECT_EQ(pmlab_pool_store8(pool, reinterpret_cast<uint64_t*>(bytes + size - 4), 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_store8(pool, reinterpret_cast<uint64_t*>(bytes + 3), 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pmlab_errormsg()).find("aligned"), std::string::npos) << pmlab_errormsg();
  EXPECT_EQ(words[0], 42u) << "a refused store8 stored nothing";
  pmlab_pool* twice = nullptr;
  EXPECT_EQ(pmlab_pool_open(path.c_str(), "mine.c", nullptr, &twice), PMLAB_E_BUSY);
  EXPECT_EQ(twice, nullptr);
  pmlab_pool_close(pool);
  EXPECT_EQ(pmlab_pool_open(path.c_str(), "other", nullptr, &pool), PMLAB_E_WRONG_LAYOUT);
  const pmlab_pool_config eadr{PMLAB_DOMAIN_EADR, PMLAB_FLUSH_CLFLUSHOPT};
  ASSERT_EQ(pmlab_pool_open(path.c_str(), "mine.c", &eadr, &pool), PMLAB_OK) << pmlab_errormsg();
  words = static_cast<uint64_t*>(pmlab_pool_data(pool));
  EXPECT_EQ(words[0], 42u);
  EXPECT_EQ(std::memcmp(words + 8, "payload!", 8), 0);
  pmlab_pool_close(pool);
  pmlab_pool_close(nullptr);
}

TEST(CPoolApi, BadLayoutsAndOptionsAreRefused) {
  TempDir dir;
  pmlab_pool* pool = nullptr;
  EXPECT_EQ(pmlab_pool_create(dir.file("a").c_str(), 1 << 20, nullptr, 1, nullptr, &pool), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_create(dir.file("a").c_str(), 1 << 20, "log", 1, nullptr, &pool), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_pool_create(nullptr, 1 << 20, "mine", 1, nullptr, &pool), PMLAB_E_INVALID_ARGUMENT);
  pmlab_pool_config bad{};
  const int seven = 7;
  std::memcpy(&bad.domain, &seven, sizeof seven);  // what a C caller may store
  EXPECT_EQ(pmlab_pool_create(dir.file("b").c_str(), 1 << 20, "mine", 1, &bad, &pool), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pool, nullptr);
}

TEST(CPageStoreApi, PagesWrittenWholeAndInPartSurviveReopening) {
  TempDir dir;
  const std::string path = dir.file("pages");
  const pmlab_page_store_config config{4096, 8, 2};
  pmlab_page_store* store = nullptr;
  ASSERT_EQ(pmlab_page_store_create(path.c_str(), &config, PMLAB_PAGE_ULOG, &store), PMLAB_OK) << pmlab_errormsg();
  std::vector<unsigned char> page(4096, 0xab), back(4096);
  ASSERT_EQ(pmlab_page_store_write(store, 1, 6, page.data()), PMLAB_OK);
  ASSERT_EQ(pmlab_page_store_update(store, 0, 2, 10, "abc", 3), PMLAB_OK);
  EXPECT_EQ(pmlab_page_store_write(store, 2, 0, page.data()), PMLAB_E_INVALID_ARGUMENT);  // lanes 0, 1
  EXPECT_EQ(pmlab_page_store_read(store, 8, back.data()), PMLAB_E_INVALID_ARGUMENT);      // pages 0..7
  pmlab_page_store_close(store);
  // (A flush outside the enumerators, which a C caller may pass, is refused as the C++ API's test shows:
  // C++ cannot pass one by value without undefined behaviour.)
  ASSERT_EQ(pmlab_page_store_open(path.c_str(), static_cast<pmlab_page_flush>(0), &store), PMLAB_OK);
  pmlab_page_store_config got{};
  ASSERT_EQ(pmlab_page_store_get_config(store, &got), PMLAB_OK);
  EXPECT_EQ(got.page_size, 4096u);
  EXPECT_EQ(got.pages, 8u);
  EXPECT_EQ(got.lanes, 2u);
  ASSERT_EQ(pmlab_page_store_read(store, 6, back.data()), PMLAB_OK);
  EXPECT_EQ(back, page);
  ASSERT_EQ(pmlab_page_store_read(store, 2, back.data()), PMLAB_OK);
  EXPECT_EQ(std::memcmp(back.data() + 10, "abc", 3), 0);
  EXPECT_EQ(back[9], 0);
  pmlab_page_store_close(store);
  EXPECT_EQ(pmlab_page_store_create(dir.file("none").c_str(), nullptr, PMLAB_PAGE_COW, &store),
            PMLAB_E_INVALID_ARGUMENT);
}

}  // namespace
