// The public maps' keys (pmlab::Map, pmlab::Tree): byte strings of one size, 1..8, as the structures' 64-bit
// keys. The bytes read as a big-endian number: for one size that is one-to-one and keeps memcmp order.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "pmlab/api/errors.hpp"

namespace pmlab::api {

class ByteKeys {
 public:
  static constexpr unsigned kMaxBytes = 8;

  explicit ByteKeys(unsigned bytes) noexcept : bytes_(bytes) {}
  unsigned bytes() const noexcept { return bytes_; }

  // `key` as a number; Error(PMLAB_E_INVALID_ARGUMENT) for a key of another size.
  [[gnu::always_inline]] uint64_t number(std::string_view key) const {
    if (key.size() != bytes_) [[unlikely]]
      raise(PMLAB_E_INVALID_ARGUMENT,
            "a key of " + std::to_string(key.size()) + " bytes where keys are " + std::to_string(bytes_) + " bytes");
    // One load and a byte swap (a copy of a fixed size, which compiles to the load, for full words).
    static_assert(std::endian::native == std::endian::little);
    uint64_t k = 0;
    if (key.size() == 8) std::memcpy(&k, key.data(), 8);
    else std::memcpy(reinterpret_cast<char*>(&k) + 8 - key.size(), key.data(), key.size());
    return __builtin_bswap64(k);
  }

  // The smallest key not below `from`, which may be shorter (then padded with zeros) or longer (then the
  // key after its prefix); false when no key can follow.
  bool lower_bound(std::string_view from, uint64_t* key) const {
    uint64_t k = 0;
    for (size_t i = 0; i < bytes_; ++i) k = k << 8 | (i < from.size() ? static_cast<unsigned char>(from[i]) : 0u);
    if (from.size() > bytes_ && from.substr(bytes_).find_first_not_of('\0') != std::string_view::npos) {
      const uint64_t max = bytes_ == 8 ? UINT64_MAX : (uint64_t{1} << (8 * bytes_)) - 1;
      if (k == max) return false;
      ++k;
    }
    *key = k;
    return true;
  }

  // The key whose number is `k`.
  std::string bytes_of(uint64_t k) const {
    std::string key(bytes_, '\0');
    for (size_t i = key.size(); i-- > 0; k >>= 8) key[i] = static_cast<char>(k & 0xff);
    return key;
  }

 private:
  unsigned bytes_;
};

// A C caller's key: `size` bytes at `key`.
inline std::string_view key_view(const void* key, size_t size) { return {static_cast<const char*>(key), size}; }

}  // namespace pmlab::api
