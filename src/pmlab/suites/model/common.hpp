// What the model suite's cases share: the `device` parameter and the metrics a validation case reports.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/model/device_params.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/model/validation_streams.hpp"

namespace pmlab::suites::model {

inline constexpr const char* kSuite = "model";

// A case of this suite: it runs on the device model alone, so it needs no medium and leaves no point of
// its sweep out.
bench::CaseDef model_case(std::string name, std::string summary, std::vector<bench::ParamSpec> params,
                          std::function<void(bench::RunContext&)> body);

// device=c1|c2|c3|dcpmm (the presets of the PMEM classes of [PMIdioBench]) or a CXL preset.
bench::ParamSpec device_param(std::vector<std::string> defaults = {"dcpmm"}, std::vector<std::string> quick = {});
// The run's device preset.
pmlab::model::DeviceParams device_of(const bench::RunContext& ctx);

// The modelled ratios of a stream (kind modelled, model = device name).
void report_stream(bench::RunContext& ctx, const pmlab::model::DeviceParams& device,
                   const pmlab::model::StreamResult& r);

// A published value beside a modelled one, as `<name>_published`; a missing reference file is a note,
// not an error (the modelled numbers stand on their own).
void report_published(bench::RunContext& ctx, const std::string& name, const Result<pmlab::model::Published>& p,
                      const std::string& unit);

}  // namespace pmlab::suites::model
