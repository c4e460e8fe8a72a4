#include "pmlab/crash/exec/disassembly_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "pmlab/common/files.hpp"
#include "pmlab/common/hash.hpp"

namespace pmlab::crash::exec {

namespace fs = std::filesystem;

namespace {

// Changes with what an entry holds, so that an older pmlab's entries are never read as this one's.
constexpr std::string_view kFormat = "pmlab-disassembly 1";
constexpr std::string_view kEnd = "end ";

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// FNV-1a of the file's bytes, read in pieces; nullopt where it cannot be read.
std::optional<uint64_t> content_hash(const std::string& path) {
  auto fd = open_regular_file(path, O_RDONLY, "module");
  if (!fd) return std::nullopt;
  std::vector<char> piece(1 << 20);
  uint64_t h = kFnvOffsetBasis64;
  for (;;) {
    const ssize_t n = ::read(fd->get(), piece.data(), piece.size());
    if (n < 0) return std::nullopt;
    if (n == 0) return h;
    h = fnv1a64(piece.data(), static_cast<size_t>(n), h);
  }
}

}  // namespace

std::string cache_directory() {
  if (const char* own = std::getenv("PMLAB_CACHE_DIR")) return own;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return (fs::path(xdg) / "pmlab").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return (fs::path(home) / ".cache" / "pmlab").string();
  return {};
}

std::string disassembly_cache_file(const std::string& directory, const std::string& module, const std::string& objdump,
                                   std::string_view kept_by) {
  if (directory.empty()) return {};
  const auto content = content_hash(module);
  struct stat tool {};
  if (!content || ::stat(objdump.c_str(), &tool) != 0) return {};
  uint64_t h = fnv1a64(kFormat.data(), kFormat.size(), *content);
  h = fnv1a64(objdump.data(), objdump.size(), h);
  const uint64_t tool_id[] = {static_cast<uint64_t>(tool.st_size), static_cast<uint64_t>(tool.st_mtim.tv_sec),
                              static_cast<uint64_t>(tool.st_mtim.tv_nsec)};
  h = fnv1a64(tool_id, sizeof tool_id, h);
  h = fnv1a64(kept_by.data(), kept_by.size(), h);
  return (fs::path(directory) / "disassembly" / (hex(h) + ".txt")).string();
}

std::optional<std::string> read_cached_disassembly(const std::string& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  auto text = read_regular_file(file, "disassembly cache entry");
  if (!text) return std::nullopt;
  // "...lines...\nend <checksum of the lines>\n"
  std::string& t = *text;
  if (t.size() < kEnd.size() + 17 || t.back() != '\n') return std::nullopt;
  const size_t last = t.rfind('\n', t.size() - 2);
  const size_t begin = last == std::string::npos ? 0 : last + 1;
  if (t.compare(begin, kEnd.size(), kEnd) != 0) return std::nullopt;
  const std::string lines = t.substr(0, begin);
  if (t.substr(begin + kEnd.size(), 16) != hex(fnv1a64(lines.data(), lines.size()))) return std::nullopt;
  return lines;
}

Status write_cached_disassembly(const std::string& file, std::string_view kept) {
  std::error_code ec;
  fs::create_directories(fs::path(file).parent_path(), ec);
  if (ec) return Status(Errc::io_error, "cannot make " + fs::path(file).parent_path().string() + ": " + ec.message());
  std::string text(kept);
  text += std::string(kEnd) + hex(fnv1a64(kept.data(), kept.size())) + "\n";
  return write_file_atomically(file, text);
}

}  // namespace pmlab::crash::exec
