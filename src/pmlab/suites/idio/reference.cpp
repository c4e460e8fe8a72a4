#include "pmlab/suites/idio/reference.hpp"

#include <cctype>
#include <charconv>

namespace pmlab::suites::idio {

PublishedSheets PublishedSheets::parse(const std::string& text) {
  auto book = model::SheetBook::parse(text, "text");
  return book ? PublishedSheets(std::move(*book)) : PublishedSheets{};
}

Result<PublishedSheets> PublishedSheets::load(const std::string& path) {
  auto book = model::SheetBook::load(path);
  if (!book) return book.status();
  if (book->empty()) return error(Errc::corrupted, path + " holds no sheets");
  return PublishedSheets(std::move(*book));
}

std::string PublishedSheets::default_path() { return model::reference_dir() + "/pmidiobench/pmem-idiosyncrasies.txt"; }

std::optional<std::string> PublishedSheets::text(const std::string& sheet, const std::string& cell) const {
  size_t letters = 0;
  while (letters < cell.size() && std::isupper(static_cast<unsigned char>(cell[letters]))) ++letters;
  int row = 0;
  auto [end, ec] = std::from_chars(cell.data() + letters, cell.data() + cell.size(), row);
  if (letters == 0 || ec != std::errc() || end != cell.data() + cell.size()) return std::nullopt;
  return book_.cell(sheet, cell.substr(0, letters), row);
}

std::optional<double> PublishedSheets::number(const std::string& sheet, const std::string& cell) const {
  const auto t = text(sheet, cell);
  if (!t) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
  if (ec != std::errc() || end != t->data() + t->size()) return std::nullopt;
  return v;
}

std::string published_source(const std::string& sheet, const std::string& what) {
  return "[PMIdioBench] (Gugnani et al., PVLDB 14(4) 2021), artifact data, sheet " + sheet + ": " + what +
         " (data/reference/pmidiobench/pmem-idiosyncrasies.txt)";
}

}  // namespace pmlab::suites::idio
