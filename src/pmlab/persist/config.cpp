#include "pmlab/persist/config.hpp"

#include <cstdlib>
#include <string>

#include "pmlab/common/enum_names.hpp"

namespace pmlab::persist {

namespace {
constexpr auto kDomains =
    enum_names<Domain>("durability domain", {{Domain::none, "none"}, {Domain::adr, "adr"}, {Domain::eadr, "eadr"}});
constexpr auto kFlushes =
    enum_names<FlushInstruction>("flush instruction", {{FlushInstruction::clflush, "clflush"},
                                                       {FlushInstruction::clflushopt, "clflushopt"},
                                                       {FlushInstruction::clwb, "clwb"},
                                                       {FlushInstruction::ntstore, "ntstore"}});
}  // namespace

const char* to_string(Domain d) noexcept { return kDomains.name(d); }
const char* to_string(FlushInstruction f) noexcept { return kFlushes.name(f); }
Result<Domain> parse_domain(std::string_view text) { return kDomains.parse(text); }
Result<FlushInstruction> parse_flush(std::string_view text) { return kFlushes.parse(text); }

Status check_supported(FlushInstruction f, const platform::CpuFeatures& cpu) {
  switch (f) {
    case FlushInstruction::clflush:
      if (!cpu.clflush) return error(Errc::unsupported, "this CPU has no clflush (CPUID.01H:EDX[19])");
      break;
    case FlushInstruction::clflushopt:
      if (!cpu.clflushopt)
        return error(Errc::unsupported, "this CPU has no clflushopt (CPUID.(EAX=07H,ECX=0):EBX[23]); use clflush");
      break;
    case FlushInstruction::clwb:
      if (!cpu.clwb)
        return error(Errc::unsupported,
                     "this CPU has no clwb (CPUID.(EAX=07H,ECX=0):EBX[24]); use clflushopt or clflush");
      break;
    case FlushInstruction::ntstore:
      // Non-temporal stores are baseline x86_64 (SSE2); partial lines at the edges need a line flush.
      if (!cpu.sse2 || !cpu.clflush)
        return error(Errc::unsupported, "this CPU lacks SSE2 non-temporal stores or clflush");
      break;
  }
  return Status::success();
}

FlushInstruction best_line_flush(const platform::CpuFeatures& cpu) noexcept {
  if (cpu.clwb) return FlushInstruction::clwb;
  if (cpu.clflushopt) return FlushInstruction::clflushopt;
  return FlushInstruction::clflush;
}

Result<Config> default_config(Domain granularity_domain, const platform::CpuFeatures& cpu) {
  Config config;
  config.domain = granularity_domain;
  config.flush = best_line_flush(cpu);
  if (const char* forced = std::getenv("PMLAB_FORCE_DOMAIN"); forced != nullptr && *forced != '\0') {
    auto d = parse_domain(forced);
    if (!d) return error(Errc::invalid_argument, "PMLAB_FORCE_DOMAIN: " + d.status().message());
    config.domain = *d;
  }
  if (const char* forced = std::getenv("PMLAB_FORCE_FLUSH"); forced != nullptr && *forced != '\0') {
    auto f = parse_flush(forced);
    if (!f) return error(Errc::invalid_argument, "PMLAB_FORCE_FLUSH: " + f.status().message());
    config.flush = *f;
  }
  PMLAB_TRY(check_supported(config.flush, cpu));
  return config;
}

}  // namespace pmlab::persist
