// A layout whose data area is one structure that formats, opens (and so recovers) and checks itself in a
// region: `T::format(region, persister, options)`, `T::open(region, persister)`, `T::check(region)`. The
// pool's lifecycle around it (a pool that fails to format is removed again, a pool of another layout is
// refused by name, recovery is an open) is the same for every such structure, so it is written once here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::pool {

// A new pool of `layout` at `path` with a freshly formatted T in its data area (named once formatted, as
// Pool::create says); no pool file is left behind when T refuses the options.
template <class T, class Options>
Result<std::unique_ptr<Pool>> create_structure_pool(const std::string& path, uint64_t size, const std::string& layout,
                                                    const Options& options) {
  return Pool::create(path, size, layout, 1, {}, [&](Pool& pool) -> Status {
    auto structure = T::format({pool.data(), pool.data_size()}, pool.persister(), options);
    return structure ? Status::success() : structure.status();
  });
}

// The T in an open pool of `layout`, recovered.
template <class T>
Result<std::unique_ptr<T>> open_structure(Pool& pool, const std::string& layout) {
  if (layout_name(pool.header()) != layout)
    return error(Errc::wrong_layout,
                 pool.path() + " has layout '" + layout_name(pool.header()) + "', not '" + layout + "'");
  return T::open({pool.data(), pool.data_size()}, pool.persister());
}

// A structure whose region starts with a versioned superblock: {magic, version, …, checksum}, the magic
// written last by format so that a half-formatted region is refused. The checksum is fnv1a64 of the fields
// after the magic and before the checksum.
template <class Superblock>
uint64_t superblock_checksum(const Superblock& sb) {
  return fnv1a64_between(sb, &Superblock::version, &Superblock::checksum);
}

// Formats a region that starts with a Superblock so that a crash at any point leaves one that open
// refuses or a whole one: the magic to zero, durable before anything else changes; then `formatted`'s other
// fields and their checksum; then what `write_body` writes (it returns whether it wrote back anything,
// unfenced); one fence; last the magic, durable. What already holds its formatted value (most of a new
// pool, which is zero) is only read (Persister::store_changed), and nothing is fenced twice.
template <class Superblock, class WriteBody>
void format_behind_magic(Superblock* at, Superblock formatted, uint64_t magic, const persist::Persister& p,
                         WriteBody&& write_body) {
  if (persist::Persister::load8(&at->magic) != 0) {
    p.store8(&at->magic, 0);
    p.persist(&at->magic, 8);
  }
  formatted.magic = 0;
  formatted.checksum = superblock_checksum(formatted);
  const bool wrote = p.store_changed(at, &formatted, sizeof formatted) > 0;
  if (write_body() || wrote) p.fence();
  p.store8(&at->magic, magic);
  p.persist(&at->magic, 8);
}

// Refuses a region that is not `line`-aligned; `what` names the structure in the error.
inline Status check_region_aligned(std::span<const std::byte> region, uint64_t line, const std::string& what) {
  if (reinterpret_cast<uintptr_t>(region.data()) % line != 0)
    return error(Errc::invalid_argument,
                 "a " + what + " region must start on a " + std::to_string(line) + "-byte boundary");
  return Status::success();
}

// The superblock at the start of a region of at least `min_bytes` that starts on a `line`, once its magic,
// checksum and version prove it one of this pmlab's; `what` names the structure in the errors.
template <class Superblock>
Result<Superblock> read_superblock(std::span<const std::byte> region, const std::string& what, uint64_t min_bytes,
                                   uint64_t line, uint64_t magic, uint32_t version) {
  if (region.size() < min_bytes)
    return error(Errc::corrupted, "a region of " + std::to_string(region.size()) + " bytes cannot hold a " + what);
  PMLAB_TRY(check_region_aligned(region, line, what));
  Superblock sb;
  std::memcpy(&sb, region.data(), sizeof sb);
  if (sb.magic != magic)
    return error(Errc::corrupted, "no " + what + " superblock (never formatted, or formatting did not finish)");
  if (sb.checksum != superblock_checksum(sb)) return error(Errc::corrupted, what + " superblock checksum mismatch");
  if (sb.version != version)
    return error(Errc::corrupted, what + " format version " + std::to_string(sb.version) + " (this pmlab reads " +
                                      std::to_string(version) + ")");
  return sb;
}

// Registers `layout` so that `Pool::recover()` opens its T and `pmlab pool check` checks it.
template <class T>
bool register_structure_layout(const std::string& layout, std::string description) {
  return LayoutRegistry::instance().add({layout, 1, std::move(description),
                                         [layout](Pool& p) -> Status {
                                           auto structure = open_structure<T>(p, layout);
                                           return structure ? Status::success() : structure.status();
                                         },
                                         [](const Pool& p) -> Status {
                                           return T::check({p.data(), p.data_size()});
                                         }});
}

}  // namespace pmlab::pool
