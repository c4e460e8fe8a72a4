#include "pmlab/ds/common/mode.hpp"

#include <string>

namespace pmlab::ds {

const char* to_string(Mode m) noexcept {
  switch (m) {
    case Mode::dram: return "dram";
    case Mode::pmem_volatile: return "pmem-volatile";
    case Mode::persist: return "persist";
    case Mode::tx: return "tx";
  }
  return "?";
}

Result<Mode> parse_mode(std::string_view text) {
  for (Mode m : {Mode::dram, Mode::pmem_volatile, Mode::persist, Mode::tx})
    if (text == to_string(m)) return m;
  return error(Errc::invalid_argument, "unknown structure mode '" + std::string(text) + "' (dram|pmem-volatile|persist|tx)");
}

const char* medium_of(Mode m) noexcept { return m == Mode::dram ? "dram" : "pool"; }

}  // namespace pmlab::ds
