// crash.designs: one derived row per registered design, from the registry and not from the runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::suites::crash_cost {
namespace {

using record::RunRecord;

std::vector<RunRecord> derive() {
  for (const bench::SuiteSummary& s : bench::Registry::instance().summaries())
    if (s.suite == "crash") return s.derive({}, nlohmann::ordered_json::object());
  ADD_FAILURE() << "the crash suite registers no summary";
  return {};
}

std::string note(const RunRecord& row, const std::string& key) {
  for (const auto& [k, text] : row.notes)
    if (k == key) return text;
  return "";
}

TEST(CrashDesigns, EveryRegisteredDesignHasARowAndNoBrokenTwinDoes) {
  const std::vector<RunRecord> rows = derive();
  size_t designs = 0;
  for (const crash::SubjectInfo& info : crash::SubjectRegistry::instance().all()) {
    bool found = false;
    for (const RunRecord& row : rows) found = found || row.name == "crash.designs/design:" + info.name;
    EXPECT_EQ(found, !info.deliberately_broken) << info.name;
    designs += info.deliberately_broken ? 0 : 1;
  }
  EXPECT_EQ(rows.size(), designs);
  EXPECT_GT(designs, 20u);
}

TEST(CrashDesigns, ARowNamesItsFamilyRoleAndClaimedDomains) {
  const std::vector<RunRecord> rows = derive();
  const RunRecord* redo = nullptr;
  const RunRecord* corpus = nullptr;
  for (const RunRecord& row : rows) {
    if (row.name == "crash.designs/design:ptm.redo") redo = &row;
    if (corpus == nullptr && row.name.rfind("crash.designs/design:corpus.", 0) == 0) corpus = &row;
  }
  ASSERT_NE(redo, nullptr);
  ASSERT_NE(corpus, nullptr);
  EXPECT_EQ(note(*redo, "family"), "ptm");
  EXPECT_EQ(note(*redo, "role"), "design");
  EXPECT_EQ(note(*redo, "domains"), "adr, eadr");
  EXPECT_EQ(note(*corpus, "family"), "corpus");
  EXPECT_EQ(note(*corpus, "role"), "simulator test program");
  EXPECT_TRUE(redo->metrics.empty()) << "a list, not a measurement";
}

}  // namespace
}  // namespace pmlab::suites::crash_cost
