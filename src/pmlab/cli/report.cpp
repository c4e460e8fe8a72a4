// The commands the Python side carries out: pmlab report (results.json into a self-contained report.html),
// pmlab compare (two runs, or two sets of repetitions, metric by metric) and pmlab export (CSV / JSON lines).
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

void add_compare(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("compare",
                                 "Compare two runs (or two directories of repetitions) metric by metric: "
                                 "change, Mann-Whitney U significance; exit 1 on a significant regression");
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  auto threshold = std::make_shared<std::string>("5%");
  auto html = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  cmd->add_option("A", *a, "baseline run directory, or a directory of its repetitions")
      ->required()
      ->check(non_empty_value());
  cmd->add_option("B", *b, "contender run directory, or a directory of its repetitions")
      ->required()
      ->check(non_empty_value());
  cmd->add_option("--threshold", *threshold, "smallest change that counts (default 5%)")->check(non_empty_value());
  cmd->add_option("--html", *html, "also write the comparison as HTML")->check(non_empty_value());
  cmd->add_flag("--all", *all, "list unchanged metrics too");
  cmd->callback([&exit_code, a, b, threshold, html, all] {
    std::vector<std::string> args = {*a, *b, "--threshold", *threshold};
    if (!html->empty()) args.insert(args.end(), {"--html", *html});
    if (*all) args.push_back("--all");
    exit_code = run_python_tool("pmlab_report.compare", args);
  });
}

void add_export(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("export", "Write DIR/results.json as one row per run and metric (CSV or JSON lines)");
  auto dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto out = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "run directory holding results.json")->required()->check(non_empty_value());
  cmd->add_option("--format", *format, "csv or jsonl (default csv)")->check(CLI::IsMember({"csv", "jsonl"}));
  cmd->add_option("--out", *out, "write here instead of DIR/results.csv or DIR/results.jsonl")
      ->check(non_empty_value());
  cmd->callback([&exit_code, dir, format, out] {
    std::vector<std::string> args = {*dir, "--format", *format};
    if (!out->empty()) args.insert(args.end(), {"--out", *out});
    exit_code = run_python_tool("pmlab_report.export", args);
  });
}

}  // namespace pmlab::cli
