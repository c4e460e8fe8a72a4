#include "pmlab/model/published.hpp"

#include <cctype>
#include <cstdlib>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include "pmlab/common/files.hpp"
#include "pmlab/common/text.hpp"

namespace pmlab::model {
namespace {

constexpr const char* kIdiosyncrasies = "pmidiobench/pmem-idiosyncrasies.txt";
constexpr const char* kXpbuffer = "optane-study/09-infer_xpbuffer.csv";
constexpr const char* kCxlPoints = "cxl/cxl-points.csv";

std::mutex g_problems_mutex;
std::vector<ReferenceProblem> g_problems;

void note_problem(const std::string& path, const std::string& reason) {
  const std::string dir = reference_dir();
  std::string file = path;
  if (file.starts_with(dir + "/")) file = file.substr(dir.size() + 1);
  std::lock_guard lock(g_problems_mutex);
  for (const ReferenceProblem& p : g_problems)
    if (p.file == file) return;
  g_problems.push_back({file, reason});
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    const std::string reason = exists ? "cannot be read" : "not found";
    note_problem(path, reason);
    return error(Errc::not_found, "published data " + reason + ": " + path);
  }
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_directory(path, ec);
}

// share/pmlab/reference beside the bin/ directory the running executable is in.
std::string beside_executable() {
  const std::filesystem::path exe = executable_path();
  if (exe.empty()) return {};
  return (exe.parent_path().parent_path() / "share" / "pmlab" / "reference").string();
}

std::optional<double> number(const std::string& text) {
  double v = 0;
  const std::string t(trim(text));
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

// "B10" -> ("B", 10)
std::optional<std::pair<std::string, int>> split_ref(const std::string& ref) {
  size_t i = 0;
  while (i < ref.size() && std::isupper(static_cast<unsigned char>(ref[i]))) ++i;
  if (i == 0 || i == ref.size()) return std::nullopt;
  int row = 0;
  auto [end, ec] = std::from_chars(ref.data() + i, ref.data() + ref.size(), row);
  if (ec != std::errc() || end != ref.data() + ref.size()) return std::nullopt;
  return std::make_pair(ref.substr(0, i), row);
}

Result<SheetBook> idiosyncrasies() { return SheetBook::load(reference_dir() + "/" + kIdiosyncrasies); }

Status missing(const SheetBook& book, const std::string& what) {
  return error(Errc::corrupted, book.origin() + ": cannot find " + what);
}

Result<Published> cell_value(const SheetBook& book, const std::string& sheet, const std::string& column, int row,
                             const std::string& what, std::string source) {
  auto text = book.cell(sheet, column, row);
  if (!text) return missing(book, what);
  auto v = number(*text);
  if (!v) return missing(book, what + " as a number");
  return Published{*v, std::move(source)};
}

// Sheet I3's tables: a title row containing `title`, then "Pattern" / "IO Size" rows, sizes one row
// below, then one row per pattern.
Result<Published> i3_table(const std::string& title, const std::string& pattern, int size, const std::string& what) {
  auto book = idiosyncrasies();
  if (!book) return book.status();
  auto title_row = book->find_row("I3", "A", title, 1, /*exact=*/false);
  if (!title_row) return missing(*book, "sheet I3 table '" + title + "'");
  auto header = book->find_row("I3", "A", "Pattern", *title_row);
  if (!header) return missing(*book, "sheet I3 header of '" + title + "'");
  auto column = book->find_column("I3", *header + 1, std::to_string(size));
  if (!column) return missing(*book, "sheet I3 size " + std::to_string(size) + " of '" + title + "'");
  auto row = book->find_row("I3", "A", pattern, *header + 2);
  if (!row) return missing(*book, "sheet I3 row " + pattern + " of '" + title + "'");
  return cell_value(*book, "I3", *column, *row, what,
                    std::string("PMIdioBench I3, 16 threads (") + kIdiosyncrasies + " sheet I3)");
}

}  // namespace

const ReferenceLocation& reference_location() {
  static const ReferenceLocation location = [] {
    if (const char* dir = std::getenv("PMLAB_REFERENCE_DIR"); dir != nullptr && *dir != '\0')
      return ReferenceLocation{dir, "PMLAB_REFERENCE_DIR"};
    // An installed pmlab reads its own installation's copy, even where the source tree is still around.
    if (const std::string installed = beside_executable(); is_directory(installed))
      return ReferenceLocation{installed, "install prefix"};
    const std::string source = std::string(PMLAB_SOURCE_DIR) + "/data/reference";
    if (is_directory(source)) return ReferenceLocation{source, "source tree"};
    if (const std::string configured = std::string(PMLAB_INSTALL_DATADIR) + "/reference"; is_directory(configured))
      return ReferenceLocation{configured, "install prefix"};
    return ReferenceLocation{"", "none"};
  }();
  return location;
}

std::string reference_dir() {
  const ReferenceLocation& location = reference_location();
  return location.directory.empty() ? std::string("(no reference data directory found)") : location.directory;
}

std::vector<ReferenceProblem> reference_problems() {
  std::lock_guard lock(g_problems_mutex);
  return g_problems;
}

Result<SheetBook> SheetBook::load(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.status();
  return parse(*text, path);
}

Result<SheetBook> SheetBook::parse(const std::string& text, const std::string& origin) {
  SheetBook book;
  book.origin_ = origin;
  std::istringstream lines(text);
  std::string line, sheet;
  int number_of_line = 0;
  while (std::getline(lines, line)) {
    ++number_of_line;
    if (line.rfind("########", 0) == 0) {
      // "######## sheet 2 I3": the name is the last word.
      const std::string header(trim(line));
      sheet = header.substr(header.find_last_of(' ') + 1);
      continue;
    }
    if (trim(line).empty()) continue;
    if (sheet.empty())
      return error(Errc::corrupted, origin + ":" + std::to_string(number_of_line) + ": a cell before any sheet header");
    size_t start = 0;
    while (start <= line.size()) {
      size_t bar = line.find(" | ", start);
      const std::string cell = line.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      const size_t eq = cell.find('=');
      auto ref = eq == std::string::npos ? std::nullopt : split_ref(cell.substr(0, eq));
      if (!ref) return error(Errc::corrupted, origin + ":" + std::to_string(number_of_line) + ": not a cell: " + cell);
      book.sheets_[sheet][ref->second][ref->first] = std::string(trim(cell.substr(eq + 1)));
      if (bar == std::string::npos) break;
      start = bar + 3;
    }
  }
  return book;
}

std::optional<std::string> SheetBook::cell(const std::string& sheet, const std::string& column, int row) const {
  auto s = sheets_.find(sheet);
  if (s == sheets_.end()) return std::nullopt;
  auto r = s->second.find(row);
  if (r == s->second.end()) return std::nullopt;
  auto c = r->second.find(column);
  if (c == r->second.end()) return std::nullopt;
  return c->second;
}

std::optional<int> SheetBook::find_row(const std::string& sheet, const std::string& column, const std::string& text,
                                       int from, bool exact) const {
  auto s = sheets_.find(sheet);
  if (s == sheets_.end()) return std::nullopt;
  for (auto r = s->second.lower_bound(from); r != s->second.end(); ++r) {
    auto c = r->second.find(column);
    if (c == r->second.end()) continue;
    if (exact ? c->second == text : c->second.find(text) != std::string::npos) return r->first;
  }
  return std::nullopt;
}

std::optional<std::string> SheetBook::find_column(const std::string& sheet, int row, const std::string& text) const {
  auto s = sheets_.find(sheet);
  if (s == sheets_.end()) return std::nullopt;
  auto r = s->second.find(row);
  if (r == s->second.end()) return std::nullopt;
  for (const auto& [column, value] : r->second)
    if (value == text) return column;
  return std::nullopt;
}

Result<Published> published_i3_ewr(const std::string& pattern, int size) {
  return i3_table("EWR", pattern, size, "I3 EWR " + pattern + " " + std::to_string(size) + " B");
}

Result<Published> published_i3_bandwidth(const std::string& pattern, int size) {
  return i3_table("b/w", pattern, size, "I3 bandwidth " + pattern + " " + std::to_string(size) + " B");
}

Result<Published> published_i6_read_hit_ratio(const std::string& pattern) {
  auto book = idiosyncrasies();
  if (!book) return book.status();
  auto row = book->find_row("I6", "A", "read_hit_ratio");
  if (!row) return missing(*book, "sheet I6 read_hit_ratio");
  auto header = book->find_row("I6", "A", "counter");
  if (!header) return missing(*book, "sheet I6 counter header");
  auto column = book->find_column("I6", *header, pattern);
  if (!column) return missing(*book, "sheet I6 column " + pattern);
  return cell_value(*book, "I6", *column, *row, "I6 read_hit_ratio " + pattern,
                    std::string("PMIdioBench I6, 16 threads, 256 B (") + kIdiosyncrasies + " sheet I6)");
}

Result<Published> published_i7(const std::string& counter) {
  auto book = idiosyncrasies();
  if (!book) return book.status();
  auto row = book->find_row("I7", "A", counter);
  if (!row) return missing(*book, "sheet I7 counter " + counter);
  return cell_value(*book, "I7", "B", *row, "I7 " + counter,
                    std::string("PMIdioBench I7, repeated 256 B nt-stores (") + kIdiosyncrasies + " sheet I7)");
}

Result<Published> published_i1_pstore_ns(const std::string& medium) {
  auto book = idiosyncrasies();
  if (!book) return book.status();
  auto header = book->find_row("I1", "A", "cache hit ratio");
  if (!header) return missing(*book, "sheet I1 header");
  auto column = book->find_column("I1", *header, medium + "-Store");
  if (!column) return missing(*book, "sheet I1 column " + medium + "-Store");
  auto row = book->find_row("I1", "A", "1", *header + 1);
  if (!row) return missing(*book, "sheet I1 hit ratio 1");
  return cell_value(
      *book, "I1", *column, *row, "I1 " + medium + "-Store",
      std::string("PMIdioBench I1, 8 threads, hit ratio 1, test_i1.c's method (") + kIdiosyncrasies + " sheet I1)");
}

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t comma = line.find(',');; comma = line.find(',', from)) {
    out.emplace_back(trim(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace

namespace {

// A row of a CSV file in the reference data: the header's names beside the row's fields.
struct CsvRow {
  std::string path;
  std::vector<std::string> header, fields;

  std::optional<size_t> index_of(const std::string& column) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == column) return i;
    return std::nullopt;
  }
  std::string text(const std::string& column) const {
    const auto i = index_of(column);
    return i && *i < fields.size() ? fields[*i] : std::string();
  }
  Result<double> number_in(const std::string& column) const {
    const auto i = index_of(column);
    if (!i) return error(Errc::corrupted, path + ": no column '" + column + "'");
    const auto v = *i < fields.size() ? number(fields[*i]) : std::nullopt;
    if (!v)
      return error(Errc::corrupted, path + ": row '" + fields.front() + "' has no number in column '" + column + "'");
    return *v;
  }
};

// The row of `file` whose first field is `row`; the first line names the columns.
Result<CsvRow> csv_row(const std::string& file, const std::string& row) {
  CsvRow out{reference_dir() + "/" + file, {}, {}};
  auto text = read_text(out.path);
  if (!text) return text.status();
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (trim(line).empty()) continue;
    auto fields = split_csv(line);
    if (out.header.empty()) {
      out.header = std::move(fields);
    } else if (fields.front() == row) {
      out.fields = std::move(fields);
      return out;
    }
  }
  return error(Errc::not_found, out.path + ": no row '" + row + "'");
}

}  // namespace

Result<Published> published_csv_cell(const std::string& file, const std::string& row, const std::string& column,
                                     std::string source) {
  auto found = csv_row(file, row);
  if (!found) return found.status();
  auto v = found->number_in(column);
  if (!v) return v.status();
  return Published{*v, std::move(source)};
}

Result<Published> published_cxl(const std::string& point) {
  auto found = csv_row(kCxlPoints, point);
  if (!found) return found.status();
  auto v = found->number_in("value");
  if (!v) return v.status();
  return Published{*v, found->text("study") + " " + found->text("where") + " (" + kCxlPoints + ": " + point + ")"};
}

std::string xpbuffer_source() { return std::string("FAST'20 fig. 9 (") + kXpbuffer + ")"; }

Result<std::vector<std::pair<double, double>>> published_xpbuffer_curve() {
  const std::string path = reference_dir() + "/" + kXpbuffer;
  auto text = read_text(path);
  if (!text) return text.status();
  std::istringstream lines(*text);
  std::string line;
  std::vector<std::pair<double, double>> out;
  bool header = true;
  while (std::getline(lines, line)) {
    if (trim(line).empty()) continue;
    if (header) {  // "RegionSize,WriteAmp"
      header = false;
      continue;
    }
    const size_t comma = line.find(',');
    auto region = comma == std::string::npos ? std::nullopt : number(line.substr(0, comma));
    auto amp = comma == std::string::npos ? std::nullopt : number(line.substr(comma + 1));
    if (!region || !amp) return error(Errc::corrupted, path + ": not a RegionSize,WriteAmp row: " + line);
    out.emplace_back(*region, *amp);
  }
  if (out.empty()) return error(Errc::corrupted, path + ": no data rows");
  return out;
}

}  // namespace pmlab::model
