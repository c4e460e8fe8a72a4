// pmlab/pmlab.hpp: everything of pmlab's C++ API (docs/library.md).
#ifndef PMLAB_PMLAB_HPP
#define PMLAB_PMLAB_HPP

#include <pmlab/error.hpp>
#include <pmlab/lockfree.hpp>
#include <pmlab/log.hpp>
#include <pmlab/map.hpp>
#include <pmlab/page_store.hpp>
#include <pmlab/pmlab.h>
#include <pmlab/ptm.hpp>
#include <pmlab/tree.hpp>
#include <pmlab/version.h>

// The persistence vocabulary and pools for one's own designs name call sites (std::source_location): C++20.
#if __cplusplus >= 202002L
#include <pmlab/persist.hpp>
#include <pmlab/pool.hpp>
#endif

#endif  // PMLAB_PMLAB_HPP
