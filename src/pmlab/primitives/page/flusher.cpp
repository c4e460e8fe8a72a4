#include "pmlab/primitives/page/flusher.hpp"

#include <string>

namespace pmlab::primitives::page {

const char* to_string(Policy p) noexcept {
  switch (p) {
    case Policy::cow: return "cow";
    case Policy::ulog: return "ulog";
    case Policy::hybrid: return "hybrid";
  }
  return "?";
}

Result<Policy> parse_policy(std::string_view text) {
  for (Policy p : {Policy::cow, Policy::ulog, Policy::hybrid})
    if (text == to_string(p)) return p;
  return error(Errc::invalid_argument, "unknown page flusher '" + std::string(text) + "' (cow, ulog, hybrid)");
}

Result<std::unique_ptr<PageFlusher>> make_flusher(Policy policy, PageStore& store, uint32_t max_threads) {
  switch (policy) {
    case Policy::cow: return std::unique_ptr<PageFlusher>(std::make_unique<CowFlusher>(store));
    case Policy::ulog: return std::unique_ptr<PageFlusher>(std::make_unique<MicroLogFlusher>(store));
    case Policy::hybrid: {
      auto model = FlushCostModel::calibrate(store, max_threads);
      if (!model) return model.status();
      return std::unique_ptr<PageFlusher>(std::make_unique<HybridFlusher>(store, std::move(*model)));
    }
  }
  return error(Errc::invalid_argument, "unknown page flusher");
}

}  // namespace pmlab::primitives::page
