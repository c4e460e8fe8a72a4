// A layout whose data area is one structure that formats, opens (and so recovers) and checks itself in a
// region: `T::format(region, persister, options)`, `T::open(region, persister)`, `T::check(region)`. The
// pool's lifecycle around it (a pool that fails to format is removed again, a pool of another layout is
// refused by name, recovery is an open) is the same for every such structure, so it is written once here.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "pmlab/common/status.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::pool {

// A new pool of `layout` at `path` with a freshly formatted T in its data area; no pool file is left
// behind when T refuses the options.
template <class T, class Options>
Result<std::unique_ptr<Pool>> create_structure_pool(const std::string& path, uint64_t size, const std::string& layout,
                                                    const Options& options) {
  auto made = Pool::create(path, size, layout);
  if (!made) return made.status();
  auto structure = T::format({(*made)->data(), (*made)->data_size()}, (*made)->persister(), options);
  if (!structure) {
    made->reset();
    (void)remove(path);
    return structure.status();
  }
  return made;
}

// The T in an open pool of `layout`, recovered.
template <class T>
Result<std::unique_ptr<T>> open_structure(Pool& pool, const std::string& layout) {
  if (layout_name(pool.header()) != layout)
    return error(Errc::wrong_layout,
                 pool.path() + " has layout '" + layout_name(pool.header()) + "', not '" + layout + "'");
  return T::open({pool.data(), pool.data_size()}, pool.persister());
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
