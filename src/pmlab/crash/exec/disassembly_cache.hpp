// What objdump read of a module, kept across runs. Disassembling a large module of the program's own (an
// interpreter built outside the system's directories: 23 MB of libpython takes objdump 1.5 s) would cost as
// much in every campaign, though what it finds depends only on the module's bytes and the objdump reading
// them: the cache names each entry by both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab::crash::exec {

// Where the cache is: $PMLAB_CACHE_DIR, else $XDG_CACHE_HOME/pmlab, else $HOME/.cache/pmlab; "" (no cache)
// where PMLAB_CACHE_DIR is set empty or none of them is set.
std::string cache_directory();

// The entry for the module at `module` as `objdump` disassembles it and a parse that keeps the lines
// `kept_by` names (what decides which lines an entry holds) reads it, in `directory`: named by a hash of the
// module's bytes, of objdump's path, size and time, and of `kept_by`. "" where `directory` is "" or the
// module cannot be read.
std::string disassembly_cache_file(const std::string& directory, const std::string& module, const std::string& objdump,
                                   std::string_view kept_by);

// An entry's kept lines (parse_disassembly's `kept`); nullopt where there is none or it is not whole (its
// last line holds a checksum of those before it). Reading an entry makes it the most recently used.
std::optional<std::string> read_cached_disassembly(const std::string& file);
// Writes an entry whole or not at all, its directory made where missing.
Status write_cached_disassembly(const std::string& file, std::string_view kept);

// Every rebuild of a program makes its modules new entries, so the cache is kept to this size in all.
inline constexpr uint64_t kDisassemblyCacheBytes = 64ULL << 20;

// Removes the entries in `directory` least recently used first until those left take `max_bytes` or less,
// never `keep` (the entry just written), and the hidden files of writes that died more than an hour ago.
// Returns how many files it removed; one another process removed first is not counted.
size_t prune_disassembly_cache(const std::string& directory, uint64_t max_bytes, const std::string& keep);

}  // namespace pmlab::crash::exec
