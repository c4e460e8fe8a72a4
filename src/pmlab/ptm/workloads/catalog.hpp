// The ptm workloads by name: the one place a workload's name (a run parameter) becomes its class
// template. A run names "sps-N" for SPS with N swaps per transaction; the others by their own names.
#pragma once

#include <string_view>
#include <utility>

#include "pmlab/common/named_tags.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/bank.hpp"
#include "pmlab/ptm/workloads/bptree.hpp"
#include "pmlab/ptm/workloads/hashmap.hpp"
#include "pmlab/ptm/workloads/queue.hpp"
#include "pmlab/ptm/workloads/sps.hpp"

namespace pmlab::ptm::workloads {

// A workload template as a value, for a generic lambda:
//   visit_workload(kind, [&]<template <class> class W>(WorkloadTag<W>) { … W<RedoPtm> … });
template <template <class> class W>
struct WorkloadTag {
  static constexpr const char* kName = W<UndoPtm>::kName;
  static constexpr uint64_t kRecords = W<UndoPtm>::kRecords, kQuickRecords = W<UndoPtm>::kQuickRecords;
};

using Workloads =
    NamedTags<WorkloadTag<Sps>, WorkloadTag<Queue>, WorkloadTag<HashMap>, WorkloadTag<BPTree>, WorkloadTag<Bank>>;
inline constexpr auto kWorkloadKinds = Workloads::kNames;
inline constexpr std::string_view kSpsKind = WorkloadTag<Sps>::kName;

constexpr bool is_workload_kind(std::string_view kind) noexcept { return Workloads::contains(kind); }

// Calls f(WorkloadTag<W>{}) for the workload of kind `kind` and returns what it returns. A kind outside
// kWorkloadKinds is a caller's error (names are parsed before a run): std::invalid_argument.
template <class F>
decltype(auto) visit_workload(std::string_view kind, F&& f) {
  return Workloads::visit(kind, "ptm workload", std::forward<F>(f));
}

}  // namespace pmlab::ptm::workloads
