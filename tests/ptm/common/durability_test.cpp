#include <gtest/gtest.h>

#include "pmlab/persist/config.hpp"
#include "pmlab/ptm/common/durability.hpp"

namespace pmlab::ptm {
namespace {

TEST(Durability, ModelsMapToPerRegionDomains) {
  const persist::Config base{persist::Domain::adr, persist::FlushInstruction::clwb, false, true};
  for (Durability d : {Durability::adr, Durability::eadr, Durability::pdram, Durability::pdram_lite}) {
    auto parsed = parse_durability(to_string(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
    EXPECT_TRUE(log_config(d, base).elide_fence) << "the breakdown switches must survive the model";
  }
  EXPECT_FALSE(parse_durability("nvram").ok());
  EXPECT_EQ(data_config(Durability::pdram_lite, base).domain, persist::Domain::eadr);
  EXPECT_EQ(log_config(Durability::pdram_lite, base).domain, persist::Domain::none);
  EXPECT_EQ(data_config(Durability::pdram, base).domain, persist::Domain::none);
  EXPECT_EQ(log_config(Durability::eadr, base).domain, persist::Domain::eadr);
  EXPECT_TRUE(log_on_dram(Durability::pdram_lite));
  EXPECT_FALSE(data_on_dram(Durability::pdram_lite));
  EXPECT_TRUE(data_on_dram(Durability::pdram));
}

}  // namespace
}  // namespace pmlab::ptm
