#include "pmlab/suites/lockfree/published.hpp"

#include <charconv>

#include "pmlab/model/published.hpp"

namespace pmlab::suites::lockfree {
namespace {

constexpr const char* kFile = "pmidiobench/lock-free-results.txt";

// The dump, read once; empty when it cannot be read (the published columns are then left out).
const model::SheetBook* book() {
  static const auto loaded = model::SheetBook::load(model::reference_dir() + "/" + kFile);
  return loaded ? &*loaded : nullptr;
}

std::optional<double> number(const model::SheetBook& b, const std::string& sheet, const std::string& column, int row) {
  const auto text = b.cell(sheet, column, row);
  if (!text) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

// Single-letter columns (the dump's tables stay within A..Z).
std::string column_after(const std::string& column, int n) { return std::string(1, static_cast<char>(column[0] + n)); }

// The spreadsheet's label of a design.
std::string label(const std::string& design) {
  if (design == "linkfree") return "Link-free";
  if (design == "soft") return "SOFT";
  if (design == "tlog") return "TLog";
  if (design == "logfree") return "Log-free";
  return "";
}

// In `row`, the column among `first` and the `span` columns after it whose text is `text`.
std::optional<std::string> column_in(const model::SheetBook& b, const std::string& sheet, int row,
                                     const std::string& first, int span, const std::string& text) {
  for (int k = 0; k <= span; ++k) {
    const std::string c = column_after(first, k);
    if (b.cell(sheet, c, row) == text) return c;
  }
  return std::nullopt;
}

// Push avg, p99, p99.9 then pop avg, p99, p99.9 are columns B..G of the ring tables.
std::optional<std::string> ring_column(const std::string& op, const std::string& stat) {
  const int base = op == "push" ? 0 : op == "pop" ? 3 : -1;
  const int k = stat == "avg" ? 0 : stat == "p99" ? 1 : stat == "p999" ? 2 : -1;
  if (base < 0 || k < 0) return std::nullopt;
  return column_after("B", base + k);
}

std::optional<double> ring_row(const std::string& title, const std::string& system, const std::string& op,
                               const std::string& stat) {
  const model::SheetBook* b = book();
  const auto column = ring_column(op, stat);
  if (b == nullptr || !column) return std::nullopt;
  const auto table = b->find_row("rb_queue", "A", title, 1, /*exact=*/false);
  if (!table) return std::nullopt;
  const auto row = b->find_row("rb_queue", "A", system, *table);
  if (!row) return std::nullopt;
  return number(*b, "rb_queue", *column, *row);
}

}  // namespace

std::optional<double> published_list_throughput(const std::string& domain, const std::string& design, int range,
                                                int update) {
  const model::SheetBook* b = book();
  if (b == nullptr || (domain != "adr" && domain != "eadr")) return std::nullopt;
  // "ADR Design Throughput (ops/s)", then a row of "28 Threads, N Range" blocks, the column titles, the
  // designs, and one row per update percentage, which the block's first column holds.
  const auto title = b->find_row("list", "A", domain == "adr" ? "ADR Design Throughput" : "eADR Design Throughput", 1,
                                 /*exact=*/false);
  if (!title) return std::nullopt;
  const auto block = b->find_column("list", *title + 1, "28 Threads, " + std::to_string(range) + " Range");
  if (!block) return std::nullopt;
  const auto column = column_in(*b, "list", *title + 3, column_after(*block, 1), 3, label(design));
  const auto row = b->find_row("list", *block, std::to_string(update), *title + 4);
  if (!column || !row) return std::nullopt;
  return number(*b, "list", *column, *row);
}

std::optional<double> published_list_latency(const std::string& op, const std::string& design, int range, int update) {
  const model::SheetBook* b = book();
  if (b == nullptr) return std::nullopt;
  // "Operation latency (us), 28 Threads, U % Updates", then "N Range" over two columns (SOFT, TLog).
  const auto title =
      b->find_row("list", "A", "Operation latency (us), 28 Threads, " + std::to_string(update) + " % Updates");
  if (!title) return std::nullopt;
  const auto block = b->find_column("list", *title + 1, std::to_string(range) + " Range");
  if (!block) return std::nullopt;
  const auto column = column_in(*b, "list", *title + 2, *block, 1, label(design));
  const auto row = b->find_row("list", "A", op, *title + 3);
  if (!column || !row) return std::nullopt;
  return number(*b, "list", *column, *row);
}

std::optional<double> published_ring_latency(const std::string& system, const std::string& op,
                                             const std::string& stat) {
  const std::string name = system == "tx-adr"        ? "TX (ADR)"
                           : system == "tx-eadr"     ? "TX (eADR)"
                           : system == "txfree-eadr" ? "TX-free (eADR)"
                           : system == "volatile"    ? "Volatile"
                                                     : "";
  if (name.empty()) return std::nullopt;
  return ring_row("rb queue latency in us", name, op, stat);
}

std::optional<double> published_r5_ratio(const std::string& design, const std::string& op, const std::string& stat) {
  const std::string name = design == "tx" ? "TX" : design == "txfree" ? "TX-free" : "";
  if (name.empty()) return std::nullopt;
  return ring_row("rb queue eADR no flush latency normalized", name, op, stat);
}

}  // namespace pmlab::suites::lockfree
