#include "pmlab/suites/model/common.hpp"

#include <algorithm>

#include "pmlab/model/presets.hpp"

namespace pmlab::suites::model {

using pmlab::model::DeviceParams;

bench::CaseDef model_case(std::string name, std::string summary, std::vector<bench::ParamSpec> params,
                          std::function<void(bench::RunContext&)> body) {
  return bench::CaseDef{
      .suite = kSuite,
      .name = std::move(name),
      .summary = std::move(summary),
      .params = std::move(params),
      .body = std::move(body),
  };
}

bench::ParamSpec device_param(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return bench::std_params::choice("device",
                                   "modelled device: a PMEM class preset of [PMIdioBench] Table 2, or a CXL preset",
                                   pmlab::model::preset_names(), std::move(defaults), std::move(quick));
}

DeviceParams device_of(const bench::RunContext& ctx) {
  // The parameter's choices are exactly the preset names, so the lookup cannot miss.
  return *pmlab::model::preset(ctx.params().text("device"));
}

void report_stream(bench::RunContext& ctx, const DeviceParams& device, const pmlab::model::StreamResult& r) {
  const auto kind = record::MetricKind::modelled;
  ctx.metric("ewr", r.metrics.ewr, "ratio", kind, device.name);
  ctx.metric("rwr", r.metrics.rwr, "ratio", kind, device.name);
  ctx.metric("ebr", r.metrics.ebr, "ratio", kind, device.name);
  ctx.metric("write_hit_ratio", r.metrics.write_hit_ratio, "ratio", kind, device.name);
  ctx.metric("read_hit_ratio", r.metrics.read_hit_ratio, "ratio", kind, device.name);
  // The bandwidth the device sustains for this stream when nothing else limits it.
  ctx.metric("device_bandwidth", r.metrics.device_bandwidth_mib_s, "MiB/s", kind, device.name);
  ctx.metric("requests", static_cast<double>(r.events), "count", kind, device.name);
}

void report_published(bench::RunContext& ctx, const std::string& name, const Result<pmlab::model::Published>& p,
                      const std::string& unit) {
  if (!p) {
    ctx.note(name + "_published", p.status().message());
    return;
  }
  ctx.metric(name + "_published", p->value, unit, record::MetricKind::published, p->source);
}

}  // namespace pmlab::suites::model
