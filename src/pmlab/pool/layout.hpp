// Layouts: what lives in a pool's data area, and how to recover and check it.
//
// Each persistent design registers its layout once; `Pool::recover()` and `pmlab pool check` find it
// by the name stored in the header.
#pragma once

#include <functional>
#include <string>
#include <deque>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::pool {

class Pool;

struct Layout {
  std::string name;
  uint32_t version = 1;
  std::string description;
  // Brings the data area back to a consistent state after a crash. May be empty (nothing to recover).
  std::function<Status(Pool&)> recover;
  // Verifies the layout's invariants without changing anything. May be empty.
  std::function<Status(const Pool&)> check;
};

class LayoutRegistry {
 public:
  static LayoutRegistry& instance();
  // Returns false if the name is taken (a programming error the caller should assert on).
  bool add(Layout layout);
  const Layout* find(const std::string& name) const;
  std::vector<const Layout*> all() const;

 private:
  std::deque<Layout> layouts_;  // stable addresses for find()
};

}  // namespace pmlab::pool
