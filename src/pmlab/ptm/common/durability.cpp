#include "pmlab/ptm/common/durability.hpp"

#include <string>

#include "pmlab/common/enum_names.hpp"

namespace pmlab::ptm {

namespace {
constexpr auto kDurabilities = enum_names<Durability>("durability model", {{Durability::adr, "adr"},
                                                                           {Durability::eadr, "eadr"},
                                                                           {Durability::pdram, "pdram"},
                                                                           {Durability::pdram_lite, "pdram-lite"}});
}  // namespace

const char* to_string(Durability d) noexcept { return kDurabilities.name(d); }
Result<Durability> parse_durability(std::string_view text) { return kDurabilities.parse(text); }

bool log_on_dram(Durability d) noexcept { return d == Durability::pdram || d == Durability::pdram_lite; }
bool data_on_dram(Durability d) noexcept { return d == Durability::pdram; }

namespace {
persist::Config with_domain(const persist::Config& base, persist::Domain domain) noexcept {
  persist::Config c = base;
  c.domain = domain;
  return c;
}
}  // namespace

persist::Config log_config(Durability d, const persist::Config& base) noexcept {
  switch (d) {
    case Durability::adr: return with_domain(base, persist::Domain::adr);
    case Durability::eadr: return with_domain(base, persist::Domain::eadr);
    case Durability::pdram:
    case Durability::pdram_lite: return with_domain(base, persist::Domain::none);
  }
  return base;
}

persist::Config data_config(Durability d, const persist::Config& base) noexcept {
  switch (d) {
    case Durability::adr: return with_domain(base, persist::Domain::adr);
    case Durability::eadr:
    case Durability::pdram_lite: return with_domain(base, persist::Domain::eadr);
    case Durability::pdram: return with_domain(base, persist::Domain::none);
  }
  return base;
}

const char* assumption(Durability d) noexcept {
  switch (d) {
    case Durability::adr: return "log and data on the pool; every logged or written line is flushed and fenced (ADR)";
    case Durability::eadr:
      return "log and data on the pool; caches durable, no flush; fences kept to order stores (eADR)";
    case Durability::pdram:
      return "log and data on DRAM declared persistent with the caches: no flush, no fence; the memory "
             "controller's directory-based flush of DRAM on power failure is not modelled (its cost is left out)";
    case Durability::pdram_lite:
      return "log on DRAM declared persistent (no flush, no fence); data on the pool with durable caches "
             "(fence, no flush), as eADR";
  }
  return "";
}

}  // namespace pmlab::ptm
