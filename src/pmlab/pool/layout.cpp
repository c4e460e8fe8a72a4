#include "pmlab/pool/layout.hpp"

namespace pmlab::pool {

LayoutRegistry& LayoutRegistry::instance() {
  static LayoutRegistry registry;
  return registry;
}

bool LayoutRegistry::add(Layout layout) {
  if (find(layout.name) != nullptr) return false;
  layouts_.push_back(std::move(layout));
  return true;
}

const Layout* LayoutRegistry::find(const std::string& name) const {
  for (const auto& l : layouts_)
    if (l.name == name) return &l;
  return nullptr;
}

std::vector<const Layout*> LayoutRegistry::all() const {
  std::vector<const Layout*> out;
  for (const auto& l : layouts_) out.push_back(&l);
  return out;
}

}  // namespace pmlab::pool
