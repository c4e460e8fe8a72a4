#include "pmlab/model/device_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pmlab::model {
namespace {

double ratio(double num, double den) { return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN(); }

}  // namespace

DeviceMetrics derive(const DeviceParams& p, const DeviceCounters& c, double busiest_dimm_ns, double elapsed_ns) {
  const double imc_read = static_cast<double>(c.imc_reads) * kImcLine;
  const double imc_write = static_cast<double>(c.imc_writes) * kImcLine;
  const double media_read = static_cast<double>(c.media_reads) * p.media_line_bytes;
  const double media_write = static_cast<double>(c.media_writes_owed()) * p.media_line_bytes;
  const double at_peak_ns = imc_write / p.peak_write_gbps() + imc_read / p.peak_read_gbps();
  const double took_ns = std::max(elapsed_ns, busiest_dimm_ns);
  DeviceMetrics m;
  m.ewr = ratio(imc_write, media_write);
  m.rwr = ratio(media_read, media_write);
  m.imc_rwr = ratio(imc_read, imc_write);
  m.ebr = ratio(at_peak_ns, took_ns);
  m.device_bandwidth_mib_s = ratio((imc_read + imc_write) * 1e9 / 1048576.0, took_ns);
  m.read_hit_ratio = ratio(static_cast<double>(c.read_hits), static_cast<double>(c.imc_reads));
  m.write_hit_ratio = ratio(static_cast<double>(c.write_hits), static_cast<double>(c.imc_writes));
  return m;
}

std::vector<record::Metric> device_metrics(const DeviceParams& p, const DeviceCounters& c, double busiest_dimm_ns,
                                           double elapsed_ns) {
  if (c.imc_reads + c.imc_writes == 0) return {};
  const DeviceMetrics m = derive(p, c, busiest_dimm_ns, elapsed_ns);
  const double per_line = static_cast<double>(p.media_line_bytes / kImcLine);
  std::vector<record::Metric> out;
  auto add = [&](const char* name, double value, const char* unit) {
    out.push_back(record::Metric{name, value, unit, record::MetricKind::modelled, p.name});
  };
  add("ewr", m.ewr, "ratio");
  add("rwr", m.rwr, "ratio");
  add("imc_rwr", m.imc_rwr, "ratio");
  add("ebr", m.ebr, "ratio");
  add("device_bandwidth", m.device_bandwidth_mib_s, "MiB/s");
  add("read_hit_ratio", m.read_hit_ratio, "ratio");
  add("write_hit_ratio", m.write_hit_ratio, "ratio");
  add("imc_read_bytes", static_cast<double>(c.imc_reads) * kImcLine, "B");
  add("imc_write_bytes", static_cast<double>(c.imc_writes) * kImcLine, "B");
  add("media_read_bytes", static_cast<double>(c.media_reads) * p.media_line_bytes, "B");
  add("media_write_bytes", static_cast<double>(c.media_writes_owed()) * p.media_line_bytes, "B");
  add("media_rmw_reads", static_cast<double>(c.rmw_reads), "count");
  add("media_prefetch_reads", static_cast<double>(c.prefetch_reads), "count");
  add("line_rewrite_waits", static_cast<double>(c.rewrite_waits), "count");
  add("ipmctl_media_reads", static_cast<double>(c.media_reads) * per_line, "count");
  add("ipmctl_media_writes", static_cast<double>(c.media_writes_owed()) * per_line, "count");
  add("ipmctl_read_requests", static_cast<double>(c.imc_reads), "count");
  add("ipmctl_write_requests", static_cast<double>(c.imc_writes), "count");
  return out;
}

}  // namespace pmlab::model
