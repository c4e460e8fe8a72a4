// pmlab report: renders a run directory's results.json into a self-contained report.html.
#include <memory>

#include "pmlab/cli/commands.hpp"
#include "pmlab/cli/options.hpp"

namespace pmlab::cli {

void add_report(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Render DIR/results.json into DIR/report.html (offline, self-contained)");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "run directory holding results.json")->required()->check(non_empty_value());
  cmd->add_option("--out", *out, "write the report here instead of DIR/report.html")->check(non_empty_value());
  cmd->callback([&exit_code, dir, out] { exit_code = render_report(*dir, *out); });
}

}  // namespace pmlab::cli
