// pmlab::Log and the C API's pmlab_log as a user sees them.
#include <pmlab/log.hpp>
#include <pmlab/pmlab.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

class LogApi : public ::testing::TestWithParam<const char*> {
 protected:
  TempDir dir_;
};

TEST_P(LogApi, AppendsSurviveReopeningInOrder) {
  {
    auto log = pmlab::Log::create(dir_.file("log"), 2 << 20, {GetParam(), 2, false});
    EXPECT_EQ(log.writer(), GetParam());
    uint64_t previous = 0;
    for (int i = 0; i < 100; ++i) {
      const std::string entry = "entry " + std::to_string(i);
      const uint64_t lsn = log.append(static_cast<unsigned>(i % 2), entry.data(), entry.size());
      EXPECT_GT(lsn, previous);
      previous = lsn;
    }
  }
  auto log = pmlab::Log::open(dir_.file("log"));
  EXPECT_EQ(log.stats().recovered, 100u);
  EXPECT_EQ(log.stats().lanes, 2u);
  std::vector<std::string> seen;
  log.for_each([&](const pmlab::LogEntry& e) { seen.emplace_back(static_cast<const char*>(e.data), e.size); });
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], "entry " + std::to_string(i));
  log.truncate();
  int after = 0;
  log.for_each([&](const pmlab::LogEntry&) { ++after; });
  EXPECT_EQ(after, 0);
}

TEST_P(LogApi, ACheckpointDiscardsTheEntriesBelowItAcrossReopening) {
  std::vector<uint64_t> lsns;
  {
    auto log = pmlab::Log::create(dir_.file("log"), 2 << 20, {GetParam(), 2, false});
    for (int i = 0; i < 20; ++i) {
      const std::string entry = "entry " + std::to_string(i);
      lsns.push_back(log.append(static_cast<unsigned>(i % 2), entry.data(), entry.size()));
    }
    log.truncate_before(lsns[12]);  // a checkpoint covering entries 0..11
    EXPECT_EQ(pmlab::testing::code_of([&] { log.truncate_before(lsns.back() + 2); }), PMLAB_E_INVALID_ARGUMENT);
  }
  auto log = pmlab::Log::open(dir_.file("log"));
  std::vector<std::string> seen;
  log.for_each([&](const pmlab::LogEntry& e) { seen.emplace_back(static_cast<const char*>(e.data), e.size); });
  ASSERT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen.front(), "entry 12");
  const std::string more = "entry 20";
  EXPECT_GT(log.append(0, more.data(), more.size()), lsns.back());
}

INSTANTIATE_TEST_SUITE_P(Writers, LogApi, ::testing::Values("zero", "header", "classic", "header-dancing-padded"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(LogApiErrors, AFullLaneAnUnknownWriterAndAWrongPool) {
  TempDir dir;
  auto log = pmlab::Log::create(dir.file("log"), 1 << 20, {});
  std::vector<char> big(64 << 10, 'x');
  int code = PMLAB_OK;
  try {
    for (;;) log.append(big.data(), big.size());
  } catch (const pmlab::Error& e) { code = e.code(); }
  EXPECT_EQ(code, PMLAB_E_POOL_FULL);
  // An entry larger than a whole lane is no matter of room: no truncate would make it fit.
  std::vector<char> huge(2 << 20, 'x');
  EXPECT_EQ(code_of([&] { log.append(huge.data(), huge.size()); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { log.append(huge.data(), SIZE_MAX); }), PMLAB_E_INVALID_ARGUMENT);
  log.truncate();
  EXPECT_EQ(code_of([&] { log.append(huge.data(), huge.size()); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { log.append(big.data(), big.size()); }), PMLAB_OK);
  try {
    pmlab::Log::create(dir.file("other"), 1 << 20, {"fast", 1, false});
    ADD_FAILURE() << "an unknown writer was accepted";
  } catch (const pmlab::Error& e) {
    EXPECT_EQ(e.code(), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(e.exit_code(), 2);
  }
  pmlab_ptm* ptm = nullptr;
  ASSERT_EQ(pmlab_ptm_create(dir.file("heap").c_str(), 4 << 20, nullptr, &ptm), PMLAB_OK) << pmlab_errormsg();
  pmlab_ptm_close(ptm);
  pmlab_log* wrong = nullptr;
  EXPECT_EQ(pmlab_log_open(dir.file("heap").c_str(), &wrong), PMLAB_E_WRONG_LAYOUT);
}

TEST(LogCApi, AppendWalkTruncate) {
  TempDir dir;
  pmlab_log* log = nullptr;
  const pmlab_log_config config{"header", 1};
  ASSERT_EQ(pmlab_log_create(dir.file("log").c_str(), 1 << 20, &config, &log), PMLAB_OK) << pmlab_errormsg();
  for (uint64_t i = 0; i < 10; ++i) ASSERT_EQ(pmlab_log_append(log, 0, &i, sizeof i, nullptr), PMLAB_OK);
  EXPECT_EQ(pmlab_log_append(log, 5, "x", 1, nullptr), PMLAB_E_INVALID_ARGUMENT);
  uint64_t sum = 0;
  EXPECT_EQ(pmlab_log_foreach(
                log,
                [](uint64_t, unsigned, const void* data, size_t size, void* arg) {
                  uint64_t v = 0;
                  std::memcpy(&v, data, size);
                  *static_cast<uint64_t*>(arg) += v;
                  return v == 6 ? 7 : 0;  // stops at the seventh entry
                },
                &sum),
            7);
  EXPECT_EQ(sum, 0u + 1 + 2 + 3 + 4 + 5 + 6);
  EXPECT_GT(pmlab_log_lane_used(log, 0), 0u);
  EXPECT_EQ(pmlab_log_truncate_before(log, UINT64_MAX), PMLAB_E_INVALID_ARGUMENT);  // past the next append
  EXPECT_EQ(pmlab_log_truncate_before(nullptr, 1), PMLAB_E_INVALID_ARGUMENT);
  ASSERT_EQ(pmlab_log_truncate(log), PMLAB_OK);
  EXPECT_EQ(pmlab_log_lane_used(log, 0), 0u);
  pmlab_log_close(log);
  pmlab_log* again = nullptr;
  ASSERT_EQ(pmlab_log_open(dir.file("log").c_str(), &again), PMLAB_OK);
  pmlab_log_stats stats{};
  ASSERT_EQ(pmlab_log_get_stats(again, &stats), PMLAB_OK);
  EXPECT_EQ(stats.recovered, 0u);
  pmlab_log_close(again);
}

}  // namespace
