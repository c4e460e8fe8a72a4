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

// Each I<n> below measures its effect with this signature; the idiosyncrasy table points at them.
using MeasureEffect = void(Classification& c, const std::vector<record::RunRecord>& runs,
                           const PublishedSheets& published);

MeasureEffect measure_latency_asymmetry;    // I1
MeasureEffect measure_bandwidth_asymmetry;  // I2
MeasureEffect measure_small_random_writes;  // I3
MeasureEffect measure_remote_numa;          // I4
MeasureEffect measure_store_vs_pstore;      // I5
MeasureEffect measure_seq_vs_random_read;   // I6
MeasureEffect measure_read_modify_write;    // I7
MeasureEffect measure_dirty_cache_load;     // I8

using MeasureImpact = std::optional<double>(const std::vector<record::RunRecord>& runs, const std::string& medium);

// R2: the best p-store bandwidth over any thread count / the bandwidth with every CPU writing (I2's runs,
// largest access).
MeasureImpact thread_limit_gain;
// R3: random p-store bandwidth at the best size / at the smallest (I3's runs, most threads).
MeasureImpact larger_write_gain;

}  // namespace pmlab::suites::idio
