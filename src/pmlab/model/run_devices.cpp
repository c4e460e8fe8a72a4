#include "pmlab/model/run_devices.hpp"

namespace pmlab::model {

Result<RunDevices> resolve_run_devices(const std::string& model, const std::string& emulate) {
  RunDevices out;
  if (!model.empty()) {
    auto d = resolve_device(model);
    if (!d) return error(d.status().code(), "--model: " + d.status().message());
    out.device = *d;
    out.model_every_run = true;
  }
  if (!emulate.empty()) {
    auto d = resolve_device(emulate);
    if (!d) return error(d.status().code(), "--emulate: " + d.status().message());
    if (out.device && to_json(*out.device) != to_json(*d))
      return error(Errc::invalid_argument, "--model " + model + " and --emulate " + emulate +
                                               " name different devices; a run models one device");
    out.device = *d;
    out.emulate_pool = true;
  }
  return out;
}

std::unique_ptr<DeviceModel> model_for_run(const RunDevices& devices, bool pool_run) {
  if (!devices.device) return nullptr;
  const bool emulate = devices.emulate_pool && pool_run;
  if (!emulate && !devices.model_every_run) return nullptr;
  return std::make_unique<DeviceModel>(*devices.device, emulate);
}

void finish_run(const DeviceModel& model, record::RunRecord& record) {
  if (model.emulating()) label_emulated(record, model.emulation_label());
  model.add_metrics(record);
}

nlohmann::ordered_json context_json(const RunDevices& devices) {
  if (!devices.device) return nullptr;
  nlohmann::ordered_json j;
  j["name"] = devices.device->name;
  j["emulate"] = devices.emulate_pool;
  j["scope"] = devices.model_every_run ? "all runs" : "medium=pool runs";
  j["parameters"] = to_json(*devices.device);
  return j;
}

}  // namespace pmlab::model
