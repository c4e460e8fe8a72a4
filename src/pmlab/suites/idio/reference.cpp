#include "pmlab/suites/idio/reference.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pmlab::suites::idio {
namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

}  // namespace

PublishedSheets PublishedSheets::parse(const std::string& text) {
  PublishedSheets out;
  std::istringstream in(text);
  std::string line, sheet;
  while (std::getline(in, line)) {
    if (line.rfind("########", 0) == 0) {
      // "######## sheet 0 I1": the name is the last word.
      std::istringstream words(line);
      std::string w;
      while (words >> w) sheet = w;
      continue;
    }
    if (sheet.empty()) continue;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, '|')) {
      const size_t eq = cell.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = trim(cell.substr(0, eq));
      if (key.empty()) continue;
      out.sheets_[sheet][key] = trim(cell.substr(eq + 1));
    }
  }
  return out;
}

Result<PublishedSheets> PublishedSheets::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return error(Errc::not_found, "cannot read published reference data " + path);
  std::stringstream text;
  text << in.rdbuf();
  PublishedSheets sheets = parse(text.str());
  if (sheets.empty()) return error(Errc::corrupted, path + " holds no sheets");
  sheets.origin_ = path;
  return sheets;
}

std::string PublishedSheets::default_path() {
  const char* dir = std::getenv("PMLAB_REFERENCE_DIR");
#ifdef PMLAB_SOURCE_DIR
  const std::string base = dir != nullptr ? dir : PMLAB_SOURCE_DIR "/../shared/reference";
#else
  const std::string base = dir != nullptr ? dir : "../shared/reference";
#endif
  return base + "/pmidiobench/pmem-idiosyncrasies.txt";
}

std::optional<std::string> PublishedSheets::text(const std::string& sheet, const std::string& cell) const {
  const auto s = sheets_.find(sheet);
  if (s == sheets_.end()) return std::nullopt;
  const auto c = s->second.find(cell);
  if (c == s->second.end()) return std::nullopt;
  return c->second;
}

std::optional<double> PublishedSheets::number(const std::string& sheet, const std::string& cell) const {
  const auto t = text(sheet, cell);
  if (!t) return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(*t, &used);
    if (used != t->size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string published_source(const std::string& sheet, const std::string& what) {
  return "[PMIdioBench] (Gugnani et al., PVLDB 14(4) 2021), artifact data, sheet " + sheet + ": " + what +
         " (shared/reference/pmidiobench/pmem-idiosyncrasies.txt)";
}

}  // namespace pmlab::suites::idio
