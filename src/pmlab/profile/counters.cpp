#include "pmlab/profile/counters.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pmlab/common/text.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/profile/perf.hpp"

namespace pmlab::profile {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool parse_number(std::string_view text, uint64_t& out) {
  const std::string s(trim(text));
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoull(s.c_str(), &end, 0);  // 0x… or decimal
  return errno == 0 && end != nullptr && *end == '\0';
}

int open_event(uint32_t type, uint64_t config, pid_t pid, int cpu, bool inherit, std::string& why) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.disabled = 1;
  attr.inherit = inherit ? 1 : 0;
  if (pid != -1) {  // per-process core events: user space only, so no privilege is needed
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
  }
  const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    why = std::strerror(err);
    if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) why += " (no hardware PMU exposed, e.g. inside a VM)";
    if (err == EACCES || err == EPERM) why += " (needs root, CAP_PERFMON or a lower kernel.perf_event_paranoid)";
    return -1;
  }
  return static_cast<int>(fd);
}

uint64_t read_count(int fd) {
  uint64_t v = 0;
  if (read(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return 0;
  return v;
}

struct CoreEvent {
  const char* name;
  uint64_t config;
};
constexpr CoreEvent kCoreEvents[] = {{"cycles", PERF_COUNT_HW_CPU_CYCLES},
                                     {"instructions", PERF_COUNT_HW_INSTRUCTIONS},
                                     {"llc_misses", PERF_COUNT_HW_CACHE_MISSES}};

record::Metric measured(std::string name, double value, std::string unit, std::string origin) {
  return record::Metric{std::move(name), value, std::move(unit), record::MetricKind::measured, std::move(origin)};
}

Result<std::vector<DimmCounters>> ipmctl_snapshot(const std::string& ipmctl) {
  std::string out;
  auto rc = run_capture({ipmctl, "show", "-dimm", "-performance"}, out, "");
  if (!rc) return rc.status();
  if (*rc != 0) return error(Errc::failed, "ipmctl show -dimm -performance exited with status " + std::to_string(*rc));
  return parse_ipmctl_performance(out);
}

}  // namespace

Result<uint64_t> encode_event(std::string_view spec, const std::map<std::string, std::string>& formats) {
  uint64_t config = 0;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view term = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (term.empty()) continue;
    const size_t eq = term.find('=');
    const std::string key(trim(term.substr(0, eq)));
    uint64_t value = 1;  // a bare term is a flag
    if (eq != std::string_view::npos && !parse_number(term.substr(eq + 1), value))
      return error(Errc::invalid_argument, "event term '" + std::string(term) + "' has no number");
    const auto f = formats.find(key);
    if (f == formats.end()) return error(Errc::unsupported, "event term '" + key + "' has no format");
    // "config:8-15" or "config:21"
    const std::string& fmt = f->second;
    if (fmt.rfind("config:", 0) != 0) return error(Errc::unsupported, "format '" + fmt + "' is not a config field");
    const std::string bits = fmt.substr(7);
    const size_t dash = bits.find('-');
    uint64_t lo = 0, hi = 0;
    if (!parse_number(bits.substr(0, dash), lo) ||
        (dash != std::string::npos && !parse_number(bits.substr(dash + 1), hi)))
      return error(Errc::invalid_argument, "format '" + fmt + "' has no bit range");
    if (dash == std::string::npos) hi = lo;
    if (hi < lo || hi > 63) return error(Errc::invalid_argument, "format '" + fmt + "' has a bad bit range");
    const uint64_t width = hi - lo + 1;
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    if (value & ~mask) return error(Errc::invalid_argument, "value of '" + key + "' does not fit " + fmt);
    config |= value << lo;
  }
  return config;
}

std::vector<PmuEvent> find_imc_events(const std::string& sysfs_root, std::string& why_none) {
  std::vector<PmuEvent> out;
  std::error_code ec;
  if (!fs::is_directory(sysfs_root, ec)) {
    why_none = sysfs_root + " does not exist";
    return out;
  }
  std::vector<fs::path> pmus;
  for (const auto& e : fs::directory_iterator(sysfs_root, ec))
    if (e.path().filename().string().rfind("uncore_imc", 0) == 0) pmus.push_back(e.path());
  std::sort(pmus.begin(), pmus.end());
  if (pmus.empty()) {
    why_none = "no uncore memory-controller PMU (uncore_imc_*) under " + sysfs_root +
               " (AMD and most VMs expose none); memory traffic not counted";
    return out;
  }
  for (const auto& pmu : pmus) {
    uint64_t type = 0;
    if (!parse_number(read_text(pmu / "type"), type)) continue;
    std::map<std::string, std::string> formats;
    for (const auto& f : fs::directory_iterator(pmu / "format", ec))
      formats[f.path().filename().string()] = read_text(f.path());
    for (const char* name : {"cas_count_read", "cas_count_write"}) {
      const fs::path ev = pmu / "events" / name;
      if (!fs::exists(ev)) continue;
      auto config = encode_event(read_text(ev), formats);
      if (!config) continue;
      PmuEvent e{pmu.filename().string() + "/" + name, static_cast<uint32_t>(type), *config, 64.0};
      // The kernel states the scale to bytes: e.g. 6.103515625e-5 MiB per count is 64 B.
      if (std::string unit = read_text(pmu / "events" / (std::string(name) + ".unit")); unit == "MiB") {
        const double scale = std::strtod(read_text(pmu / "events" / (std::string(name) + ".scale")).c_str(), nullptr);
        if (scale > 0) e.scale = scale * 1048576.0;
      }
      out.push_back(std::move(e));
    }
  }
  if (out.empty()) why_none = "uncore_imc PMUs list no cas_count_read / cas_count_write events";
  return out;
}

Result<std::vector<DimmCounters>> parse_ipmctl_performance(std::string_view text) {
  std::vector<DimmCounters> dimms;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      return error(Errc::corrupted, "ipmctl output line " + std::to_string(line_no) + ": " + what);
    };
    if (line.rfind("---", 0) == 0) {  // ---DimmID=0x0001---
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos || line.size() < 7 || line.substr(line.size() - 3) != "---")
        return bad("a DIMM header must read ---DimmID=<id>---");
      dimms.push_back(DimmCounters{std::string(line.substr(eq + 1, line.size() - eq - 4)), 0, 0, 0, 0});
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return bad("expected Name=Value");
    if (dimms.empty()) return bad("a counter before any ---DimmID=…--- header");
    const std::string_view key = trim(line.substr(0, eq));
    uint64_t value = 0;
    if (!parse_number(line.substr(eq + 1), value)) return bad("'" + std::string(key) + "' has no number");
    DimmCounters& d = dimms.back();
    if (key == "MediaReads") d.media_reads = value;
    else if (key == "MediaWrites") d.media_writes = value;
    else if (key == "ReadRequests") d.read_requests = value;
    else if (key == "WriteRequests") d.write_requests = value;
    // Total* (lifetime) and any other counters are not needed per run.
  }
  if (dimms.empty()) return error(Errc::not_found, "ipmctl listed no PMEM DIMM");
  return dimms;
}

std::vector<record::Metric> dimm_metrics(const std::vector<DimmCounters>& before,
                                         const std::vector<DimmCounters>& after) {
  uint64_t media_reads = 0, media_writes = 0, read_requests = 0, write_requests = 0;
  for (const DimmCounters& a : after) {
    const DimmCounters* b = nullptr;
    for (const DimmCounters& c : before)
      if (c.dimm == a.dimm) b = &c;
    if (b == nullptr) return {};
    // Counters only grow until a power cycle; a wrap or reset mid-run makes the run's numbers unknowable.
    if (a.media_reads < b->media_reads || a.media_writes < b->media_writes || a.read_requests < b->read_requests ||
        a.write_requests < b->write_requests)
      return {};
    media_reads += a.media_reads - b->media_reads;
    media_writes += a.media_writes - b->media_writes;
    read_requests += a.read_requests - b->read_requests;
    write_requests += a.write_requests - b->write_requests;
  }
  if (after.size() != before.size()) return {};
  const std::string origin = "ipmctl show -dimm -performance";
  auto bytes = [](uint64_t lines) { return static_cast<double>(lines) * 64.0; };
  auto ratio = [](uint64_t num, uint64_t den) {
    return den ? static_cast<double>(num) / static_cast<double>(den) : std::nan("");
  };
  return {measured("dimm_media_read_bytes", bytes(media_reads), "B", origin),
          measured("dimm_media_write_bytes", bytes(media_writes), "B", origin),
          measured("dimm_read_request_bytes", bytes(read_requests), "B", origin),
          measured("dimm_write_request_bytes", bytes(write_requests), "B", origin),
          measured("dimm_ewr", ratio(write_requests, media_writes), "ratio", origin),
          measured("dimm_rwr", ratio(media_reads, media_writes), "ratio", origin)};
}

nlohmann::ordered_json CounterSources::context_json() const {
  nlohmann::ordered_json imc_events = nlohmann::ordered_json::array();
  for (const auto& e : imc) imc_events.push_back(e.name);
  auto source = [](bool ok, const std::string& reason) {
    return nlohmann::ordered_json{{"available", ok},
                                  {"reason", ok ? nlohmann::ordered_json() : nlohmann::ordered_json(reason)}};
  };
  nlohmann::ordered_json j;
  j["core"] = source(core, core_reason);
  if (core) j["core"]["events"] = {"cycles", "instructions", "llc_misses"};
  j["memory_traffic"] = source(!imc.empty(), imc_reason);
  if (!imc.empty()) j["memory_traffic"]["events"] = imc_events;
  j["pmem_dimms"] = source(!ipmctl.empty(), ipmctl_reason);
  return j;
}

CounterSources detect_counters() {
  CounterSources s;
  const platform::CounterSupport core = platform::hardware_counters();
  s.core = core.available;
  s.core_reason = core.reason;
  std::string why;
  s.imc = find_imc_events("/sys/bus/event_source/devices", s.imc_reason);
  if (!s.imc.empty()) {  // listed is not openable: system-wide uncore counting needs privilege
    const int probe = open_event(s.imc.front().type, s.imc.front().config, -1, 0, false, why);
    if (probe < 0) {
      s.imc_reason = "perf_event_open(" + s.imc.front().name + "): " + why;
      s.imc.clear();
    } else {
      close(probe);
    }
  }
  const std::string ipmctl = find_in_path("ipmctl");
  if (ipmctl.empty()) {
    s.ipmctl_reason = "ipmctl not installed (PMEM DIMM media counters not read)";
  } else if (auto snap = ipmctl_snapshot(ipmctl); !snap) {
    s.ipmctl_reason = snap.status().message();
  } else {
    s.ipmctl = ipmctl;
  }
  return s;
}

RunCounters::~RunCounters() { close_all(); }

void RunCounters::close_all() {
  for (auto& [name, fd] : core_fds_) close(fd);
  for (auto& [event, fd] : imc_fds_) close(fd);
  core_fds_.clear();
  imc_fds_.clear();
}

void RunCounters::begin() {
  close_all();
  std::string why;
  if (sources_.core)
    for (const CoreEvent& e : kCoreEvents)
      if (int fd = open_event(PERF_TYPE_HARDWARE, e.config, 0, -1, true, why); fd >= 0)
        core_fds_.emplace_back(e.name, fd);
  for (const PmuEvent& e : sources_.imc)
    if (int fd = open_event(e.type, e.config, -1, 0, false, why); fd >= 0) imc_fds_.emplace_back(&e, fd);
  dimms_before_.clear();
  if (!sources_.ipmctl.empty())
    if (auto snap = ipmctl_snapshot(sources_.ipmctl)) dimms_before_ = std::move(*snap);
  // Enabled last, so the snapshot above is not in the counts.
  for (auto& [name, fd] : core_fds_) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  for (auto& [event, fd] : imc_fds_) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void RunCounters::end(record::RunRecord& rec) {
  for (auto& [name, fd] : core_fds_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  for (auto& [event, fd] : imc_fds_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  const record::Metric* ops_metric = rec.find("ops");
  const double ops = ops_metric != nullptr && ops_metric->value > 0 ? ops_metric->value : 0;
  std::map<std::string, double> core;
  for (auto& [name, fd] : core_fds_) {
    core[name] = static_cast<double>(read_count(fd));
    rec.set(measured(name, core[name], "count", "perf_event_open, user space"));
    if (ops > 0) rec.set(measured(name + "_per_op", core[name] / ops, "count", "perf_event_open, user space"));
  }
  if (core.count("cycles") && core.count("instructions") && core["cycles"] > 0)
    rec.set(measured("ipc", core["instructions"] / core["cycles"], "ratio", "perf_event_open, user space"));
  double read_bytes = 0, write_bytes = 0;
  for (auto& [event, fd] : imc_fds_) {
    const double bytes = static_cast<double>(read_count(fd)) * event->scale;
    (event->name.find("read") != std::string::npos ? read_bytes : write_bytes) += bytes;
  }
  if (!imc_fds_.empty()) {
    rec.set(measured("memory_read_bytes", read_bytes, "B", "uncore IMC CAS counts, whole socket"));
    rec.set(measured("memory_write_bytes", write_bytes, "B", "uncore IMC CAS counts, whole socket"));
  }
  if (!dimms_before_.empty())
    if (auto after = ipmctl_snapshot(sources_.ipmctl))
      for (auto& m : dimm_metrics(dimms_before_, *after)) rec.set(std::move(m));
  close_all();
}

}  // namespace pmlab::profile
