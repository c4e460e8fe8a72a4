#include "pmlab/model/device_params.hpp"

#include <cmath>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "pmlab/common/files.hpp"
#include "pmlab/model/presets.hpp"

namespace pmlab::model {
namespace {

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

Status bad(const std::string& what) { return error(Errc::invalid_argument, "device parameter " + what); }

// One table of the parameters: how each is read from JSON and written back, so the two never drift.
struct Field {
  std::function<Status(const nlohmann::json&, DeviceParams&)> read;
  std::function<nlohmann::ordered_json(const DeviceParams&)> write;
};

// A field whose JSON value `accepts` approves is read as a T; any other is refused: "<key> must be <what>".
template <class T, class Accepts>
Field field(const char* key, T DeviceParams::*member, Accepts accepts, const char* what) {
  return {[key, member, accepts, what](const nlohmann::json& v, DeviceParams& p) -> Status {
            if (!accepts(v)) return bad(std::string(key) + " must be " + what);
            p.*member = v.get<T>();
            return Status::success();
          },
          [member](const DeviceParams& p) { return nlohmann::ordered_json(p.*member); }};
}

template <class T>
Field unsigned_field(const char* key, T DeviceParams::*member) {
  // JSON parses non-negative integers as unsigned; a negative one is a signed integer.
  return field(
      key, member, [](const nlohmann::json& v) { return v.is_number_unsigned() && v.get<uint64_t>() <= UINT32_MAX; },
      "an integer from 0 to 4294967295");
}

Field real_field(const char* key, double DeviceParams::*member) {
  return field(
      key, member, [](const nlohmann::json& v) { return v.is_number(); }, "a number");
}

Field bool_field(const char* key, bool DeviceParams::*member) {
  return field(
      key, member, [](const nlohmann::json& v) { return v.is_boolean(); }, "true or false");
}

Field string_field(const char* key, std::string DeviceParams::*member) {
  return field(
      key, member, [](const nlohmann::json& v) { return v.is_string(); }, "a string");
}

// In the order results.json prints them.
const std::vector<std::pair<std::string, Field>>& fields() {
  static const std::vector<std::pair<std::string, Field>> table{
      {"name", string_field("name", &DeviceParams::name)},
      {"description", string_field("description", &DeviceParams::description)},
      {"dimms", unsigned_field("dimms", &DeviceParams::dimms)},
      {"interleave_bytes", unsigned_field("interleave_bytes", &DeviceParams::interleave_bytes)},
      {"media_line_bytes", unsigned_field("media_line_bytes", &DeviceParams::media_line_bytes)},
      {"write_buffer_lines", unsigned_field("write_buffer_lines", &DeviceParams::write_buffer_lines)},
      {"write_out_full_lines", bool_field("write_out_full_lines", &DeviceParams::write_out_full_lines)},
      {"read_buffer_lines", unsigned_field("read_buffer_lines", &DeviceParams::read_buffer_lines)},
      {"prefetch_lines", unsigned_field("prefetch_lines", &DeviceParams::prefetch_lines)},
      {"media_read_ns", real_field("media_read_ns", &DeviceParams::media_read_ns)},
      {"buffer_read_ns", real_field("buffer_read_ns", &DeviceParams::buffer_read_ns)},
      {"write_ns", real_field("write_ns", &DeviceParams::write_ns)},
      {"host_read_ns", real_field("host_read_ns", &DeviceParams::host_read_ns)},
      {"line_rewrite_ns", real_field("line_rewrite_ns", &DeviceParams::line_rewrite_ns)},
      {"media_read_gbps", real_field("media_read_gbps", &DeviceParams::media_read_gbps)},
      {"media_write_gbps", real_field("media_write_gbps", &DeviceParams::media_write_gbps)},
      {"write_queue_bytes", unsigned_field("write_queue_bytes", &DeviceParams::write_queue_bytes)},
  };
  return table;
}

std::string known_keys() {
  std::string out;
  for (const auto& [key, field] : fields()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

Status check_latency(const char* key, double v) {
  if (!std::isfinite(v) || v < 0 || v > 1e6) return bad(std::string(key) + " must be between 0 and 1e6 ns");
  return Status::success();
}

Status check_bandwidth(const char* key, double v) {
  if (!std::isfinite(v) || v <= 0 || v > 1e4) return bad(std::string(key) + " must be above 0 and at most 1e4 GB/s");
  return Status::success();
}

}  // namespace

Status validate(const DeviceParams& p) {
  if (p.name.empty()) return bad("name must not be empty");
  if (p.dimms < 1 || p.dimms > 1024) return bad("dimms must be 1..1024");
  if (!power_of_two(p.media_line_bytes) || p.media_line_bytes < kImcLine || p.media_line_bytes > kMaxMediaLine)
    return bad("media_line_bytes must be a power of two from 64 to 1024");
  if (!power_of_two(p.interleave_bytes) || p.interleave_bytes < p.media_line_bytes || p.interleave_bytes > (1u << 30))
    return bad("interleave_bytes must be a power of two from media_line_bytes to 1 GiB");
  if (p.write_buffer_lines > (1u << 20)) return bad("write_buffer_lines must be at most 1048576");
  if (p.read_buffer_lines > (1u << 20)) return bad("read_buffer_lines must be at most 1048576");
  if (p.prefetch_lines > p.read_buffer_lines)
    return bad("prefetch_lines must be at most read_buffer_lines (prefetched lines live in the read buffer)");
  PMLAB_TRY(check_latency("media_read_ns", p.media_read_ns));
  PMLAB_TRY(check_latency("buffer_read_ns", p.buffer_read_ns));
  PMLAB_TRY(check_latency("write_ns", p.write_ns));
  PMLAB_TRY(check_latency("host_read_ns", p.host_read_ns));
  PMLAB_TRY(check_latency("line_rewrite_ns", p.line_rewrite_ns));
  PMLAB_TRY(check_bandwidth("media_read_gbps", p.media_read_gbps));
  PMLAB_TRY(check_bandwidth("media_write_gbps", p.media_write_gbps));
  return Status::success();
}

nlohmann::ordered_json to_json(const DeviceParams& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, field] : fields()) j[key] = field.write(p);
  return j;
}

Status apply_json(const nlohmann::json& overrides, DeviceParams& into) {
  if (!overrides.is_object()) return error(Errc::invalid_argument, "device parameters must be a JSON object");
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    bool known = false;
    for (const auto& [key, field] : fields()) {
      if (key != it.key()) continue;
      known = true;
      PMLAB_TRY(field.read(it.value(), into));
    }
    if (!known)
      return error(Errc::invalid_argument,
                   "unknown device parameter '" + it.key() + "' (known: base, " + known_keys() + ")");
  }
  return Status::success();
}

Result<DeviceParams> resolve_device(std::string_view preset_or_path) {
  if (auto p = preset(preset_or_path)) return *p;
  const std::string text(preset_or_path);
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool looks_like_file = text.find('/') != std::string::npos || text.ends_with(".json") || fs::exists(text, ec);
  if (!looks_like_file) {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    return error(Errc::invalid_argument, "unknown device '" + text + "' (presets: " + names + "; or a JSON file)");
  }
  auto body = read_regular_file(text, "device file");
  if (!body) return body.status();
  nlohmann::json doc = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return error(Errc::invalid_argument, text + ": not valid JSON");
  if (!doc.is_object()) return error(Errc::invalid_argument, text + ": must be a JSON object of device parameters");

  std::string base = "dcpmm";
  if (doc.contains("base")) {
    if (!doc["base"].is_string()) return error(Errc::invalid_argument, text + ": base must be a preset name");
    base = doc["base"].get<std::string>();
    doc.erase("base");
  }
  auto params = preset(base);
  if (!params) return error(Errc::invalid_argument, text + ": unknown base preset '" + base + "'");
  params->name = fs::path(text).stem().string();
  params->description = "from " + text + " (base " + base + ")";
  if (Status s = apply_json(doc, *params); !s) return error(s.code(), text + ": " + s.message());
  if (Status s = validate(*params); !s) return error(s.code(), text + ": " + s.message());
  return *params;
}

}  // namespace pmlab::model
