#include "pmlab/primitives/page/flusher.hpp"

#include <string>

#include "pmlab/common/enum_names.hpp"

namespace pmlab::primitives::page {

namespace {
constexpr auto kPolicies =
    enum_names<Policy>("page flusher", {{Policy::cow, "cow"}, {Policy::ulog, "ulog"}, {Policy::hybrid, "hybrid"}});
}  // namespace

const char* to_string(Policy p) noexcept { return kPolicies.name(p); }
Result<Policy> parse_policy(std::string_view text) { return kPolicies.parse(text); }

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
