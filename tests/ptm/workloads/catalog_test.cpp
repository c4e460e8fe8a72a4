// The ptm workload catalog (ptm/workloads/catalog.hpp): every kind reaches the workload of that name.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/workloads/catalog.hpp"

namespace pmlab::ptm::workloads {
namespace {

TEST(WorkloadCatalog, EveryKindVisitsTheWorkloadOfThatName) {
  for (const std::string_view kind : kWorkloadKinds) {
    const std::string visited =
        visit_workload(kind, []<template <class> class W>(WorkloadTag<W>) { return std::string(W<RedoPtm>::kName); });
    EXPECT_EQ(visited, kind);
    EXPECT_GT(
        visit_workload(kind, []<template <class> class W>(WorkloadTag<W>) { return WorkloadTag<W>::kRecords; }),
        visit_workload(kind, []<template <class> class W>(WorkloadTag<W>) { return WorkloadTag<W>::kQuickRecords; }))
        << kind;
  }
  EXPECT_THROW(visit_workload("sps-16", []<template <class> class W>(WorkloadTag<W>) { return 0; }),
               std::invalid_argument);
}

}  // namespace
}  // namespace pmlab::ptm::workloads
