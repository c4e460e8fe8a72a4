#include "pmlab/ds/common/mode.hpp"

#include <string>

#include "pmlab/common/enum_names.hpp"

namespace pmlab::ds {

namespace {
constexpr auto kModes = enum_names<Mode>(
    "structure mode",
    {{Mode::dram, "dram"}, {Mode::pmem_volatile, "pmem-volatile"}, {Mode::persist, "persist"}, {Mode::tx, "tx"}});
}  // namespace

const char* to_string(Mode m) noexcept { return kModes.name(m); }
Result<Mode> parse_mode(std::string_view text) { return kModes.parse(text); }

const char* medium_of(Mode m) noexcept { return m == Mode::dram ? "dram" : "pool"; }

}  // namespace pmlab::ds
