// How the idio suite measures each idiosyncrasy's effect, on the pool and on DRAM, and which cells of
// [PMIdioBench]'s artifact give the effect published for DCPMM; and the two recommendation impacts
// measured from runs rather than from an effect. Each effect fills in the numbers of a Classification
// (pool, dram, published_*, extra, and not_applicable when the runs cannot give the effect); the verdict
// is classify()'s.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pmlab/record/record.hpp"
#include "pmlab/suites/idio/classification.hpp"
#include "pmlab/suites/idio/reference.hpp"

namespace pmlab::suites::idio {

using MeasureEffect = void (*)(Classification& c, const std::vector<record::RunRecord>& runs,
                               const PublishedSheets& published);

void measure_latency_asymmetry(Classification& c, const std::vector<record::RunRecord>& runs,
                               const PublishedSheets& published);  // I1
void measure_bandwidth_asymmetry(Classification& c, const std::vector<record::RunRecord>& runs,
                                 const PublishedSheets& published);  // I2
void measure_small_random_writes(Classification& c, const std::vector<record::RunRecord>& runs,
                                 const PublishedSheets& published);  // I3
void measure_remote_numa(Classification& c, const std::vector<record::RunRecord>& runs,
                         const PublishedSheets& published);  // I4
void measure_store_vs_pstore(Classification& c, const std::vector<record::RunRecord>& runs,
                             const PublishedSheets& published);  // I5
void measure_seq_vs_random_read(Classification& c, const std::vector<record::RunRecord>& runs,
                                const PublishedSheets& published);  // I6
void measure_read_modify_write(Classification& c, const std::vector<record::RunRecord>& runs,
                               const PublishedSheets& published);  // I7
void measure_dirty_cache_load(Classification& c, const std::vector<record::RunRecord>& runs,
                              const PublishedSheets& published);  // I8

using MeasureImpact = std::optional<double> (*)(const std::vector<record::RunRecord>& runs, const std::string& medium);

// R2: the best p-store bandwidth over any thread count / the bandwidth with every CPU writing (I2's runs,
// largest access).
std::optional<double> thread_limit_gain(const std::vector<record::RunRecord>& runs, const std::string& medium);
// R3: random p-store bandwidth at the best size / at the smallest (I3's runs, most threads).
std::optional<double> larger_write_gain(const std::vector<record::RunRecord>& runs, const std::string& medium);

}  // namespace pmlab::suites::idio
