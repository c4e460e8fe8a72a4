#include "pmlab/bench/run_pattern.hpp"

#include <gtest/gtest.h>

namespace pmlab::bench {
namespace {

TEST(RunPattern, SearchesAnywhereInTheNameWithAnchorsWhereWritten) {
  auto p = RunPattern::compile("medium:dram/.*size:64/");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->found_in("core.persist/medium:dram/flush:clwb/size:64/"));
  EXPECT_FALSE(p->found_in("core.persist/medium:pool/flush:clwb/size:64/"));
  EXPECT_EQ(p->expression(), "medium:dram/.*size:64/");

  auto anchored = RunPattern::compile("^idio\\.i1/");
  ASSERT_TRUE(anchored.ok());
  EXPECT_TRUE(anchored->found_in("idio.i1/op:store/"));
  EXPECT_FALSE(anchored->found_in("x.idio.i1/op:store/"));
}

TEST(RunPattern, AMalformedExpressionIsAnInvalidArgumentThatQuotesIt) {
  for (const char* bad : {"([", "a{2,1}", "*x"}) {
    auto p = RunPattern::compile(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), Errc::invalid_argument);
    EXPECT_EQ(p.status().message(), std::string("'") + bad + "' is not a valid regular expression");
  }
}

TEST(RunPattern, ACopyMatchesAsTheOriginalDoes) {
  auto p = RunPattern::compile("flush:(clwb|clflushopt)/");
  ASSERT_TRUE(p.ok());
  const RunPattern copy = *p;
  for (const char* name : {"a/flush:clwb/", "a/flush:clflushopt/", "a/flush:ntstore/", ""})
    EXPECT_EQ(copy.found_in(name), p->found_in(name)) << name;
  EXPECT_TRUE(copy.found_in("a/flush:clwb/"));
}

}  // namespace
}  // namespace pmlab::bench
