// The device-model file parser (--model FILE, --emulate FILE) on arbitrary bytes: a Status for any
// file, never a crash, an exception or a hang; what it accepts must pass validation and serialize.
#include "fuzz_support.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/model/device_params.hpp"

using namespace pmlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = fuzz::scratch_file("device.json");
  fuzz::write_bytes(path, data, size);
  auto device = model::resolve_device(path);
  if (device) {
    if (!model::validate(*device)) std::abort();  // accepted means valid
    (void)json_text(model::to_json(*device), 1);
  }
  return 0;
}
