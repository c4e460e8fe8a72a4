// Presets, their JSON form, and the one-line errors bad device files get.
#include "pmlab/model/device_params.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "pmlab/model/presets.hpp"

namespace pmlab::model {
namespace {

using pmlab::testing::TempDir;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

TEST(Presets, EveryClassIsValidAndC4IsDcpmm) {
  for (const auto& name : preset_names()) {
    auto p = preset(name);
    ASSERT_TRUE(p) << name;
    EXPECT_TRUE(validate(*p).ok()) << name << ": " << validate(*p).message();
    EXPECT_EQ(p->name, name);
  }
  EXPECT_EQ(to_json(*preset("c4")), to_json(*preset("dcpmm")));
  EXPECT_FALSE(preset("c5"));
}

TEST(Presets, TheClassesDifferByMechanism) {
  const DeviceParams c1 = *preset("c1"), c2 = *preset("c2"), c3 = *preset("c3"), c4 = *preset("dcpmm");
  EXPECT_EQ(c1.media_line_bytes, 64u);  // no mismatch
  EXPECT_EQ(c1.write_buffer_lines + c1.read_buffer_lines, 0u);
  EXPECT_EQ(c2.media_line_bytes, 64u);
  EXPECT_GT(c2.write_buffer_lines, 0u);
  EXPECT_GT(c2.prefetch_lines, 0u);
  EXPECT_EQ(c3.media_line_bytes, 256u);  // mismatch, no buffers
  EXPECT_EQ(c3.write_buffer_lines + c3.read_buffer_lines, 0u);
  EXPECT_EQ(c4.media_line_bytes, 256u);
  EXPECT_EQ(c4.write_buffer_lines * c4.media_line_bytes, 16384u);  // the 16 KB XPBuffer
  EXPECT_TRUE(c4.write_out_full_lines);
  EXPECT_EQ(c4.interleave_bytes, 4096u);
}

TEST(DeviceParams, JsonRoundTrips) {
  const DeviceParams p = *preset("dcpmm");
  DeviceParams q = *preset("c1");
  ASSERT_TRUE(apply_json(nlohmann::json::parse(to_json(p).dump()), q).ok());
  EXPECT_EQ(to_json(q), to_json(p));
}

TEST(DeviceParams, AFileOverridesItsBasePreset) {
  TempDir dir;
  const std::string path = write(dir, "two-dimms.json", R"({"base": "dcpmm", "dimms": 2, "write_buffer_lines": 128})");
  auto p = resolve_device(path);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "two-dimms");
  EXPECT_EQ(p->dimms, 2u);
  EXPECT_EQ(p->write_buffer_lines, 128u);
  EXPECT_EQ(p->media_line_bytes, 256u);  // from the base
}

TEST(DeviceParams, BadInputIsAOneLineErrorNamingTheProblem) {
  TempDir dir;
  struct Case {
    std::string text;
    std::string says;
  };
  const std::vector<Case> cases = {
      {R"({"dimms": 0})", "dimms"},
      {R"({"dimmz": 2})", "unknown device parameter 'dimmz'"},
      {R"({"media_line_bytes": 100})", "media_line_bytes"},
      {R"({"interleave_bytes": 128})", "interleave_bytes"},
      {R"({"media_write_gbps": 0})", "media_write_gbps"},
      {R"({"media_read_ns": -1})", "media_read_ns"},
      {R"({"write_buffer_lines": -3})", "write_buffer_lines"},
      {R"({"write_buffer_lines": "64"})", "write_buffer_lines"},
      {R"({"prefetch_lines": 100, "read_buffer_lines": 10})", "prefetch_lines"},
      {R"({"base": "c9"})", "unknown base preset 'c9'"},
      {R"([1, 2])", "JSON object"},
      {R"({"dimms": )", "not valid JSON"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string path = write(dir, "bad" + std::to_string(i++) + ".json", c.text);
    auto p = resolve_device(path);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), Errc::invalid_argument) << c.text;
    EXPECT_NE(p.status().message().find(c.says), std::string::npos) << p.status().message();
    EXPECT_EQ(p.status().message().find('\n'), std::string::npos);
  }
  auto missing = resolve_device(dir.file("absent.json"));
  EXPECT_EQ(missing.status().code(), Errc::not_found);
  auto unknown = resolve_device("optane9000");
  EXPECT_EQ(unknown.status().code(), Errc::invalid_argument);
  EXPECT_NE(unknown.status().message().find("c1, c2, c3, dcpmm"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::model
