// crash.designs: the list of persistent designs in results.json, one derived row per design the crash
// simulator has registered (crash::SubjectRegistry), with its family, the durability domains it claims and
// what crash-tests it — the counterpart of [PMIdioBench] Table 3, which lists its lock-free designs and their
// guarantees. The registry lives in the process, not in results.json, so the report can only show it when a
// run writes it down: this summary does, whenever the crash suite runs. Whether each design passed a crash
// test is read by the report from crash runs in the same results (`pmlab crash` writes them), not from here.
#include "pmlab/bench/case.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::suites::crash_cost {
namespace {

// What the test suite runs on every design of the registry (tests/crash/every_design_test.cpp iterates the
// same registry, so this holds for each row by construction).
constexpr const char* kTestCoverage =
    "tests/crash/every_design_test.cpp crash-tests every registered design under each domain it claims, at "
    "line, word and byte granularity, with a bounded budget (300 crash states of a 16-operation stream, its "
    "recovery crash-tested too)";

std::string family_of(const std::string& design) { return design.substr(0, design.find('.')); }

// corpus.* and selftest.* are programs written to test the simulator itself (bug shapes and their correct
// twins), not designs pmlab offers.
const char* role_of(const std::string& family) {
  return family == "corpus" || family == "selftest" ? "simulator test program" : "design";
}

std::vector<record::RunRecord> designs(const std::vector<record::RunRecord>&, const nlohmann::ordered_json&) {
  std::vector<record::RunRecord> rows;
  for (const crash::SubjectInfo& info : crash::SubjectRegistry::instance().all()) {
    if (info.deliberately_broken) continue;  // a twin the simulator must catch: not a design
    std::string domains;
    for (persist::Domain d : info.domains)
      domains += (domains.empty() ? "" : ", ") + std::string(persist::to_string(d));
    record::RunRecord row;
    row.suite = "crash";
    row.case_name = "designs";
    row.params = {{"design", info.name}};
    row.name = record::name_in("crash", row);
    const std::string family = family_of(info.name);
    row.notes = {{"family", family},
                 {"role", role_of(family)},
                 {"description", info.description},
                 {"domains", domains},
                 {"tests", kTestCoverage}};
    rows.push_back(std::move(row));
  }
  return rows;
}

const bench::SuiteSummaryRegistration summary{bench::SuiteSummary{
    "crash",
    designs,
    {{"designs", "every registered persistent design: family, claimed domains, what crash-tests it"}}}};

}  // namespace
}  // namespace pmlab::suites::crash_cost
