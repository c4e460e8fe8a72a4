// pmlab/pmlab.hpp: everything of pmlab's C++ API (docs/library.md).
#ifndef PMLAB_PMLAB_HPP
#define PMLAB_PMLAB_HPP

#include <pmlab/error.hpp>
#include <pmlab/lockfree.hpp>
#include <pmlab/log.hpp>
#include <pmlab/map.hpp>
#include <pmlab/pmlab.h>
#include <pmlab/ptm.hpp>
#include <pmlab/version.h>

#endif  // PMLAB_PMLAB_HPP
