// How `pmlab run --model P` and `--emulate P` attach the device model to runs.
//
// --model P     every run gets a trace-only model of P: modelled metrics (EWR, RWR, EBR, …) are added,
//               nothing is slowed down.
// --emulate P   runs on medium=pool also pay P's modelled cost (DRAM runs stay the real baseline in the
//               same run); their measured numbers become modelled by "emulated:P".
// Both flags may be given together when they name the same device: then DRAM runs are modelled too.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pmlab/record/record.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/model/device_model.hpp"

namespace pmlab::model {

struct RunDevices {
  std::optional<DeviceParams> device;
  bool model_every_run = false;  // --model
  bool emulate_pool = false;     // --emulate

  bool active() const noexcept { return device.has_value(); }
};

// Empty strings: flag not given. Bad names or files are one-line errors.
Result<RunDevices> resolve_run_devices(const std::string& model, const std::string& emulate);

// The model for one run, reset and ready to attach, or null when this run is not modelled.
std::unique_ptr<DeviceModel> model_for_run(const RunDevices& devices, bool pool_run);

// After the run's body: adds the modelled metrics and, on an emulated run, labels its measured numbers.
void finish_run(const DeviceModel& model, record::RunRecord& record);

// results.json's context.model: {name, emulate, scope, parameters}; null when no device is attached.
nlohmann::ordered_json context_json(const RunDevices& devices);

}  // namespace pmlab::model
