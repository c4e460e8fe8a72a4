#include "pmlab/suites/lockfree/published.hpp"

#include <array>
#include <cstring>

namespace pmlab::suites::lockfree {
namespace {

constexpr std::array<int, 7> kUpdates{0, 5, 10, 20, 30, 40, 50};

struct ThroughputRow {
  const char* domain;
  const char* design;
  int range;
  std::array<double, 7> ops;  // by kUpdates
};

// lock-free-results.txt, sheet "list": ADR (rows A5..A11) and eADR (rows A29..A35) tables.
constexpr ThroughputRow kThroughput[] = {
    {"adr", "linkfree", 4096, {1.981e6, 3.198e6, 3.253e6, 3.454e6, 3.465e6, 3.396e6, 3.376e6}},
    {"adr", "soft", 4096, {3.127e6, 3.006e6, 3.005e6, 3.051e6, 3.048e6, 2.909e6, 3.037e6}},
    {"adr", "tlog", 4096, {5.289e6, 4.003e6, 3.934e6, 3.81e6, 3.701e6, 3.597e6, 3.503e6}},
    {"adr", "linkfree", 1024, {8.823e6, 1.604e7, 1.375e7, 1.169e7, 1.024e7, 9.262e6, 8.48e6}},
    {"adr", "soft", 1024, {1.416e7, 1.316e7, 1.274e7, 1.166e7, 1.099e7, 1.063e7, 9.93e6}},
    {"adr", "tlog", 1024, {2.367e7, 1.716e7, 1.538e7, 1.301e7, 1.148e7, 1.031e7, 9.406e6}},
    {"adr", "linkfree", 256, {2.996e7, 3.549e7, 2.534e7, 1.892e7, 1.531e7, 1.34e7, 1.218e7}},
    {"adr", "soft", 256, {4.298e7, 3.875e7, 3.155e7, 2.676e7, 2.194e7, 1.989e7, 1.899e7}},
    {"adr", "tlog", 256, {1.443e8, 3.159e7, 2.534e7, 1.92e7, 1.578e7, 1.354e7, 1.188e7}},
    {"eadr", "linkfree", 4096, {2e6, 3.189e6, 3.242e6, 3.478e6, 3.567e6, 3.554e6, 3.519e6}},
    {"eadr", "soft", 4096, {3.701e6, 3.146e6, 2.935e6, 2.985e6, 3.114e6, 2.964e6, 3.021e6}},
    {"eadr", "tlog", 4096, {5.298e6, 4.022e6, 3.966e6, 3.878e6, 3.806e6, 3.737e6, 3.686e6}},
    {"eadr", "logfree", 4096, {5.281e6, 4.026e6, 3.973e6, 3.89e6, 3.821e6, 3.762e6, 3.713e6}},
    {"eadr", "linkfree", 1024, {8.045e6, 1.789e7, 1.648e7, 1.524e7, 1.443e7, 1.303e7, 1.243e7}},
    {"eadr", "soft", 1024, {1.523e7, 1.283e7, 1.217e7, 1.196e7, 1.11e7, 9.76e6, 1.003e7}},
    {"eadr", "tlog", 1024, {2.373e7, 1.877e7, 1.796e7, 1.675e7, 1.578e7, 1.504e7, 1.452e7}},
    {"eadr", "logfree", 1024, {2.322e7, 1.896e7, 1.82e7, 1.709e7, 1.622e7, 1.551e7, 1.5e7}},
    {"eadr", "linkfree", 256, {2.846e7, 4.995e7, 4.012e7, 3.042e7, 2.75e7, 2.454e7, 2.301e7}},
    {"eadr", "soft", 256, {3.23e7, 3.896e7, 3.226e7, 2.759e7, 2.4e7, 2.19e7, 2.058e7}},
    {"eadr", "tlog", 256, {1.427e8, 3.834e7, 3.426e7, 2.934e7, 2.62e7, 2.409e7, 2.19e7}},
    {"eadr", "logfree", 256, {1.355e8, 5.136e7, 4.508e7, 3.834e7, 3.371e7, 2.802e7, 2.377e7}},
};

struct LatencyRow {
  const char* op;
  int update;
  const char* design;
  std::array<double, 3> us;  // ranges 256, 1024, 4096
};
constexpr LatencyRow kLatency[] = {
    {"search", 50, "soft", {1.356, 2.507, 8.686}}, {"search", 50, "tlog", {2.157, 2.927, 7.961}},
    {"find", 50, "soft", {1.373, 2.893, 10.23}},   {"find", 50, "tlog", {1.889, 2.942, 9.401}},
    {"search", 5, "soft", {0.6013, 1.703, 7.612}}, {"search", 5, "tlog", {0.9164, 1.504, 6.411}},
    {"find", 5, "soft", {0.6801, 2.159, 8.925}},   {"find", 5, "tlog", {0.8053, 1.749, 7.927}},
};

struct RingRow {
  const char* system;
  std::array<double, 6> us;  // push avg p99 p999, pop avg p99 p999
};
constexpr RingRow kRing[] = {
    {"tx-adr", {10.43, 14.73, 19.76, 6.586, 10.09, 14.28}},
    {"tx-eadr", {8.473, 11.49, 13.27, 4.865, 7.093, 8.563}},
    {"txfree-eadr", {2.091, 3.12, 4.736, 1.515, 2.127, 3.34}},
    {"volatile", {0.7426, 1.493, 2.195, 0.7039, 1.363, 1.926}},
};
constexpr RingRow kR5[] = {
    {"tx", {0.8584, 2.702, 3.371, 1.532, 4.502, 5.386}},
    {"txfree", {1.068, 1.249, 1.032, 0.9429, 1.119, 0.9991}},
};

std::optional<size_t> stat_index(const std::string& op, const std::string& stat) {
  const size_t base = op == "push" ? 0 : op == "pop" ? 3 : 99;
  const size_t k = stat == "avg" ? 0 : stat == "p99" ? 1 : stat == "p999" ? 2 : 99;
  if (base == 99 || k == 99) return std::nullopt;
  return base + k;
}

}  // namespace

std::optional<double> published_list_throughput(const std::string& domain, const std::string& design, int range, int update) {
  for (size_t u = 0; u < kUpdates.size(); ++u) {
    if (kUpdates[u] != update) continue;
    for (const ThroughputRow& r : kThroughput)
      if (domain == r.domain && design == r.design && range == r.range) return r.ops[u];
  }
  return std::nullopt;
}

std::optional<double> published_list_latency(const std::string& op, const std::string& design, int range, int update) {
  const int column = range == 256 ? 0 : range == 1024 ? 1 : range == 4096 ? 2 : -1;
  if (column < 0) return std::nullopt;
  for (const LatencyRow& r : kLatency)
    if (op == r.op && design == r.design && update == r.update) return r.us[static_cast<size_t>(column)];
  return std::nullopt;
}

std::optional<double> published_ring_latency(const std::string& system, const std::string& op, const std::string& stat) {
  const auto i = stat_index(op, stat);
  if (!i) return std::nullopt;
  for (const RingRow& r : kRing)
    if (system == r.system) return r.us[*i];
  return std::nullopt;
}

std::optional<double> published_r5_ratio(const std::string& design, const std::string& op, const std::string& stat) {
  const auto i = stat_index(op, stat);
  if (!i) return std::nullopt;
  for (const RingRow& r : kR5)
    if (design == r.system) return r.us[*i];
  return std::nullopt;
}

}  // namespace pmlab::suites::lockfree
