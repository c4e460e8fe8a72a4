// pmlab pool create | info | check | remove, in the spirit of pmempool.
#include <cstdio>
#include <ctime>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/bench/runner.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/cli/options.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::cli {
namespace {

std::string created_time(uint64_t unix_ns) {
  time_t secs = static_cast<time_t>(unix_ns / 1000000000ULL);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

int pool_create(const std::string& path, const std::string& size_text, const std::string& layout) {
  // The default fits every run of the quick tour (`pmlab run all --quick --pool PATH`, `make run`);
  // worked out only when needed, since it plans every case.
  auto size = size_text.empty() ? bench::pool_size_for({"all"}, true) : parse_size(size_text);
  if (!size) return report_error(error(Errc::invalid_argument, "--size: " + size.status().message()));
  auto pool = pool::Pool::create(path, *size, layout);
  if (!pool) return report_error(pool.status());
  std::printf("created %s: %s, layout %s, %s pool (store granularity %s)\n", printable(path).c_str(),
              format_size(*size).c_str(), layout.c_str(), pool::to_string((*pool)->medium()),
              (*pool)->store_granularity());
  return 0;
}

int pool_info(const std::string& path, bool as_json) {
  auto header = pool::read_header(path);
  if (!header) return report_error(header.status());
  const pool::Header& h = *header;
  nlohmann::ordered_json j = {{"path", path},
                              {"layout", pool::layout_name(h)},
                              {"layout_version", h.layout_version},
                              {"size_bytes", h.pool_size},
                              {"data_offset", h.data_offset},
                              {"uuid", pool::uuid_string(h)},
                              {"created", created_time(h.created_unix_ns)},
                              {"header_version", h.header_version}};
  const pool::Layout* layout = pool::LayoutRegistry::instance().find(pool::layout_name(h));
  j["layout_known"] = layout != nullptr;
  if (as_json) {
    std::printf("%s\n", json_text(j, 2).c_str());
    return 0;
  }
  std::printf(
      "path          %s\nlayout        %s (version %u)%s\nsize          %s (%llu bytes), data at offset %llu\n"
      "uuid          %s\ncreated       %s\nheader        version %u, checksum ok\n",
      printable(path).c_str(), printable(pool::layout_name(h)).c_str(), h.layout_version,
      layout ? "" : " - not a layout this pmlab knows", format_size(h.pool_size).c_str(),
      static_cast<unsigned long long>(h.pool_size), static_cast<unsigned long long>(h.data_offset),
      pool::uuid_string(h).c_str(), created_time(h.created_unix_ns).c_str(), h.header_version);
  return 0;
}

int pool_check(const std::string& path) {
  pool::OpenOptions options;
  options.read_only = true;
  auto pool = pool::Pool::open(path, options);
  if (!pool) return report_error(pool.status());
  const pool::Layout* layout = pool::LayoutRegistry::instance().find(pool::layout_name((*pool)->header()));
  if (layout == nullptr) {
    std::printf("%s: header ok; layout '%s' is unknown to this pmlab, its data was not checked\n",
                printable(path).c_str(), printable(pool::layout_name((*pool)->header())).c_str());
    return 0;
  }
  if (layout->check) {
    if (Status s = layout->check(**pool); !s) {
      std::fprintf(stderr, "pmlab: check failed: %s: %s\n", printable(path).c_str(), printable(s.message()).c_str());
      return 1;
    }
    std::printf("%s: header ok; layout %s consistent\n", printable(path).c_str(), layout->name.c_str());
  } else {
    std::printf("%s: header ok; layout %s has no persistent structure to check\n", printable(path).c_str(),
                layout->name.c_str());
  }
  return 0;
}

int pool_remove(const std::string& path, bool force) {
  if (Status s = pool::remove(path, force ? pool::RemoveMode::damaged_too : pool::RemoveMode::valid_only); !s)
    return report_error(s);
  std::printf("removed %s\n", printable(path).c_str());
  return 0;
}

}  // namespace

void add_pool(CLI::App& app, int& exit_code) {
  auto* pool = app.add_subcommand("pool", "Create, inspect, check and remove pool files");
  pool->require_subcommand(1);

  auto* create = pool->add_subcommand("create", "Create a pool file (never overwrites)");
  auto cpath = std::make_shared<std::string>();
  auto csize = std::make_shared<std::string>();
  auto clayout = std::make_shared<std::string>("bench");
  create->add_option("path", *cpath, "pool file to create")->required()->check(non_empty_value());
  create
      ->add_option("--size", *csize, "pool size, e.g. 64M, 1G (default: what pmlab run all --quick needs; minimum 1M)")
      ->check(size_value(pool::kMinPoolSize));
  create->add_option("--layout", *clayout, "layout name stored in the header (default bench)")
      ->check(non_empty_value());
  create->callback([&exit_code, cpath, csize, clayout] { exit_code = pool_create(*cpath, *csize, *clayout); });

  auto* info = pool->add_subcommand("info", "Print a pool's header");
  auto ipath = std::make_shared<std::string>();
  auto ijson = std::make_shared<bool>(false);
  info->add_option("path", *ipath, "pool file")->required()->check(non_empty_value());
  info->add_flag("--json", *ijson, "print as JSON");
  info->callback([&exit_code, ipath, ijson] { exit_code = pool_info(*ipath, *ijson); });

  auto* check = pool->add_subcommand("check", "Verify a pool's header and its layout's invariants (read-only)");
  auto kpath = std::make_shared<std::string>();
  check->add_option("path", *kpath, "pool file")->required()->check(non_empty_value());
  check->callback([&exit_code, kpath] { exit_code = pool_check(*kpath); });

  auto* remove = pool->add_subcommand("remove", "Delete a pool file that nobody has open (refuses other files)");
  remove->alias("rm");
  auto rpath = std::make_shared<std::string>();
  auto rforce = std::make_shared<bool>(false);
  remove->add_option("path", *rpath, "pool file")->required()->check(non_empty_value());
  remove->add_flag("--force", *rforce,
                   "also remove a damaged pool (magic present, header corrupted or file truncated); never a "
                   "file that is not a pool");
  remove->callback([&exit_code, rpath, rforce] { exit_code = pool_remove(*rpath, *rforce); });
}

}  // namespace pmlab::cli
