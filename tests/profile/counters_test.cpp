// The counter sources' parsers and the per-run metrics, on fixtures: this machine has no PMU, no uncore
// IMC and no PMEM DIMMs, so the paths that read real counters are checked through what they parse.
#include "pmlab/profile/counters.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "pmlab/record/record.hpp"

namespace pmlab::profile {
namespace {

namespace fs = std::filesystem;

TEST(Counters, EncodesEventTermsIntoTheirFormatFields) {
  const std::map<std::string, std::string> formats = {
      {"event", "config:0-7"}, {"umask", "config:8-15"}, {"edge", "config:18"}};
  auto c = encode_event("event=0x04,umask=0x03", formats);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(*c, 0x0304u);
  auto flag = encode_event("event=0xff,edge", formats);
  ASSERT_TRUE(flag);
  EXPECT_EQ(*flag, 0xffu | (1u << 18));
  EXPECT_FALSE(encode_event("event=0x100", formats));                 // does not fit 8 bits
  EXPECT_FALSE(encode_event("inv=1", formats));                       // no format for the term
  EXPECT_FALSE(encode_event("event=zz", formats));                    // not a number
  EXPECT_FALSE(encode_event("event=1", {{"event", "config1:0-7"}}));  // only config is supported
}

TEST(Counters, FindsImcEventsInASysfsTree) {
  const fs::path root = fs::temp_directory_path() / ("pmlab-sysfs-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* pmu : {"uncore_imc_0", "uncore_imc_1"}) {
    fs::create_directories(root / pmu / "format");
    fs::create_directories(root / pmu / "events");
    std::ofstream(root / pmu / "type") << "14\n";
    std::ofstream(root / pmu / "format" / "event") << "config:0-7\n";
    std::ofstream(root / pmu / "format" / "umask") << "config:8-15\n";
    std::ofstream(root / pmu / "events" / "cas_count_read") << "event=0x04,umask=0x03\n";
    std::ofstream(root / pmu / "events" / "cas_count_read.unit") << "MiB\n";
    std::ofstream(root / pmu / "events" / "cas_count_read.scale") << "6.103515625e-5\n";
    std::ofstream(root / pmu / "events" / "cas_count_write") << "event=0x04,umask=0x0c\n";
  }
  fs::create_directories(root / "cpu");  // not an IMC
  std::string why;
  const auto events = find_imc_events(root.string(), why);
  ASSERT_EQ(events.size(), 4u) << why;
  EXPECT_EQ(events[0].name, "uncore_imc_0/cas_count_read");
  EXPECT_EQ(events[0].type, 14u);
  EXPECT_EQ(events[0].config, 0x0304u);
  EXPECT_DOUBLE_EQ(events[0].scale, 64.0);  // 6.103515625e-5 MiB
  EXPECT_EQ(events[1].config, 0x0c04u);
  EXPECT_DOUBLE_EQ(events[1].scale, 64.0);  // no unit file: a CAS moves one 64 B line
  fs::remove_all(root / "uncore_imc_0");
  fs::remove_all(root / "uncore_imc_1");
  EXPECT_TRUE(find_imc_events(root.string(), why).empty());
  EXPECT_NE(why.find("no uncore memory-controller PMU"), std::string::npos) << why;
  fs::remove_all(root);
}

constexpr const char* kIpmctlBefore =
    "---DimmID=0x0001---\n"
    "   MediaReads=0x0000000000000100\n"
    "   MediaWrites=0x0000000000000200\n"
    "   ReadRequests=0x0000000000000300\n"
    "   WriteRequests=0x0000000000000400\n"
    "   TotalMediaReads=0x0000000000099999\n"
    "---DimmID=0x0101---\n"
    "   MediaReads=0\n"
    "   MediaWrites=0\n"
    "   ReadRequests=0\n"
    "   WriteRequests=0\n";

TEST(Counters, ParsesIpmctlPerformanceAndDerivesEwrAndRwr) {
  auto before = parse_ipmctl_performance(kIpmctlBefore);
  ASSERT_TRUE(before) << before.status().message();
  ASSERT_EQ(before->size(), 2u);
  EXPECT_EQ((*before)[0].dimm, "0x0001");
  EXPECT_EQ((*before)[0].write_requests, 0x400u);
  auto after = *before;
  after[0].media_writes += 100;   // 100 media writes of 64 B units …
  after[0].write_requests += 25;  // … for 25 requests: EWR 0.25, as random 64 B writes on DCPMM
  after[0].media_reads += 50;
  after[1].media_writes += 100;
  after[1].write_requests += 25;
  after[1].media_reads += 50;
  const auto m = dimm_metrics(*before, after);
  ASSERT_EQ(m.size(), 6u);
  auto find = [&](const std::string& name) {
    for (const auto& x : m)
      if (x.name == name) return x;
    ADD_FAILURE() << name;
    return record::Metric{};
  };
  EXPECT_DOUBLE_EQ(find("dimm_ewr").value, 0.25);
  EXPECT_DOUBLE_EQ(find("dimm_rwr").value, 0.5);
  EXPECT_DOUBLE_EQ(find("dimm_media_write_bytes").value, 200 * 64.0);
  EXPECT_EQ(find("dimm_ewr").kind, record::MetricKind::measured);
  // A DIMM missing from one snapshot, or a counter that went backwards, gives nothing rather than a guess.
  EXPECT_TRUE(dimm_metrics({(*before)[0]}, after).empty());
  auto reset = after;
  reset[0].media_writes = 0;  // below the first snapshot: a power cycle mid-run
  EXPECT_TRUE(dimm_metrics(*before, reset).empty());
}

TEST(Counters, BadIpmctlOutputIsAnErrorNamingTheLine) {
  auto no_header = parse_ipmctl_performance("MediaReads=0x1\n");
  ASSERT_FALSE(no_header);
  EXPECT_NE(no_header.status().message().find("line 1"), std::string::npos);
  auto bad_value = parse_ipmctl_performance("---DimmID=0x0001---\nMediaWrites=lots\n");
  ASSERT_FALSE(bad_value);
  EXPECT_NE(bad_value.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(parse_ipmctl_performance("No PMem modules found.\n"));
  EXPECT_FALSE(parse_ipmctl_performance(""));
}

TEST(Counters, AMissingSourceIsReportedAndAddsNoMetric) {
  const CounterSources sources = detect_counters();
  const auto j = sources.context_json();
  for (const char* key : {"core", "memory_traffic", "pmem_dimms"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    if (!j[key]["available"].get<bool>()) { EXPECT_FALSE(j[key]["reason"].get<std::string>().empty()) << key; }
  }
  record::RunRecord rec;
  rec.set(record::Metric{"ops", 1000, "count", record::MetricKind::measured, {}});
  RunCounters counters(sources);
  counters.begin();
  volatile uint64_t sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + static_cast<uint64_t>(i);
  counters.end(rec);
  EXPECT_EQ(rec.find("cycles") != nullptr, sources.core);
  EXPECT_EQ(rec.find("memory_read_bytes") != nullptr, !sources.imc.empty());
  if (sources.core) {
    EXPECT_GT(rec.find("instructions")->value, 100000);
    EXPECT_NE(rec.find("instructions_per_op"), nullptr);
  }
}

}  // namespace
}  // namespace pmlab::profile
