#include "pmlab/pool/structure_layout.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <span>

#include "../support/temp_dir.hpp"

namespace pmlab::pool {
namespace {

using pmlab::testing::TempDir;

constexpr uint64_t kSize = 4ULL << 20;
constexpr uint64_t kMark = 0x5354525543545552ULL;  // "STRUCTUR"

// The smallest structure that formats, opens and checks itself: a mark word at the start of its region.
struct Marked {
  struct Options {
    bool refuse = false;
  };
  static Result<std::unique_ptr<Marked>> format(std::span<std::byte> region, const persist::Persister& p,
                                                const Options& options) {
    if (options.refuse) return error(Errc::invalid_argument, "refused");
    p.store8(reinterpret_cast<uint64_t*>(region.data()), kMark);
    p.persist(region.data(), 8);
    return std::make_unique<Marked>();
  }
  static Result<std::unique_ptr<Marked>> open(std::span<std::byte> region, const persist::Persister&) {
    PMLAB_TRY(check(region));
    return std::make_unique<Marked>();
  }
  static Status check(std::span<const std::byte> region) {
    uint64_t word = 0;
    std::memcpy(&word, region.data(), 8);
    return word == kMark ? Status::success() : error(Errc::corrupted, "no mark");
  }
};

const bool registered = register_structure_layout<Marked>("marked", "a mark word (tests)");

TEST(StructureLayout, CreatesAFormattedPoolAndOpensIt) {
  ASSERT_TRUE(registered);
  TempDir dir;
  const std::string path = dir.file("m.pool");
  {
    auto made = create_structure_pool<Marked>(path, kSize, "marked", Marked::Options{});
    ASSERT_TRUE(made.ok()) << made.status().message();
    EXPECT_TRUE(open_structure<Marked>(**made, "marked").ok());
  }
  auto pool = Pool::open(path, {.layout = "marked", .persist = std::nullopt, .read_only = false});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  const Layout* layout = LayoutRegistry::instance().find("marked");
  ASSERT_NE(layout, nullptr);
  EXPECT_TRUE(layout->recover(**pool).ok());
  EXPECT_TRUE(layout->check(**pool).ok());
  std::memset((*pool)->data(), 0, 8);
  EXPECT_EQ(layout->recover(**pool).code(), Errc::corrupted);
  EXPECT_EQ(layout->check(**pool).code(), Errc::corrupted);
}

TEST(StructureLayout, LeavesNoPoolBehindWhenTheStructureRefusesItsOptions) {
  TempDir dir;
  const std::string path = dir.file("m.pool");
  auto made = create_structure_pool<Marked>(path, kSize, "marked", Marked::Options{.refuse = true});
  EXPECT_EQ(made.status().code(), Errc::invalid_argument);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(StructureLayout, RefusesAPoolOfAnotherLayoutByName) {
  TempDir dir;
  auto made = Pool::create(dir.file("other.pool"), kSize, "other");
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto opened = open_structure<Marked>(**made, "marked");
  EXPECT_EQ(opened.status().code(), Errc::wrong_layout);
  EXPECT_NE(opened.status().message().find("has layout 'other', not 'marked'"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::pool
