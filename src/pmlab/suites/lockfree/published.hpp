// Published numbers of [PMIdioBench] §6 (PMIdioBench artifact spreadsheets, text dumps in
// data/reference/pmidiobench/lock-free-results.txt): 28 threads on a 2nd-gen Xeon with Optane DCPMM.
// Read from the dump at run time (model::SheetBook), never copied into code; nothing when it is missing.
// Recorded beside ours as `published` metrics with their source, never as measurements.
#pragma once

#include <optional>
#include <string>

namespace pmlab::suites::lockfree {

inline constexpr const char* kPublishedSource = "[PMIdioBench] lock-free-results.txt: 28 threads, Intel Optane DCPMM";

// Figure 11: list throughput (ops/s). domain adr|eadr, design tlog|logfree|soft|linkfree, range
// 256|1024|4096, update 0|5|10|20|30|40|50 (%).
std::optional<double> published_list_throughput(const std::string& domain, const std::string& design, int range,
                                                int update);

// Figure 13: list latency (µs) at 5 or 50 % updates for soft|tlog; op "search" (inside updates) or
// "find" (the lookup).
std::optional<double> published_list_latency(const std::string& op, const std::string& design, int range, int update);

// Figure 16(a): ring latency (µs) for "volatile", "tx-adr", "tx-eadr", "txfree-eadr"; op push|pop,
// stat avg|p99|p999.
std::optional<double> published_ring_latency(const std::string& system, const std::string& op, const std::string& stat);

// Figure 15: ring latency with slot data not flushed / flushed, under eADR, for tx|txfree.
std::optional<double> published_r5_ratio(const std::string& design, const std::string& op, const std::string& stat);

}  // namespace pmlab::suites::lockfree
