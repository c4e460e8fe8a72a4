#include "pmlab/crash/exec/disassembly_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
  (void)::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);  // a cache that cannot be written is still read
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

size_t prune_disassembly_cache(const std::string& directory, uint64_t max_bytes, const std::string& keep) {
  if (directory.empty()) return 0;
  struct Entry {
    std::string path;
    uint64_t bytes;
    timespec used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  size_t removed = 0;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(directory) / "disassembly", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string(), name = it->path().filename().string();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.starts_with(".")) {  // write_file_atomically's temporary file
      if (st.st_mtim.tv_sec < now.tv_sec - 3600 && ::unlink(path.c_str()) == 0) ++removed;
      continue;
    }
    if (!name.ends_with(".txt")) continue;
    total += static_cast<uint64_t>(st.st_size);
    if (path != keep) entries.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Entry& e : entries) {
    if (total <= max_bytes) break;
    total -= e.bytes;  // gone either way: by this call or by another process's
    if (::unlink(e.path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace pmlab::crash::exec
