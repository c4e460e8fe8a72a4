// The writers behind Log (internal): one file each, created by Log's factory.
#pragma once

#include <memory>
#include <span>

#include "pmlab/primitives/log/log.hpp"

namespace pmlab::primitives::log {

using WriterMaker = std::unique_ptr<Log> (*)(std::span<std::byte> region, const persist::Persister& persister,
                                             const Options& options, const Geometry& geometry);

std::unique_ptr<Log> make_classic_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);
std::unique_ptr<Log> make_header_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);
std::unique_ptr<Log> make_dancing_header_log(std::span<std::byte>, const persist::Persister&, const Options&,
                                             const Geometry&);
std::unique_ptr<Log> make_zero_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);

}  // namespace pmlab::primitives::log
