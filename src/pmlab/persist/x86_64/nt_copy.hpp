// Non-temporal copy kernels: dst must be 64-byte aligned and len a multiple of 64. Each is compiled for
// its own ISA (target attribute) and chosen at run time from CPUID, as libpmem2's memcpy_nt_*.c are.
#pragma once

#include <cstddef>

#include "pmlab/persist/line_record.hpp"

namespace pmlab::persist::x86_64 {

void nt_copy_sse2(void* dst, const void* src, size_t len) noexcept;
void nt_copy_avx2(void* dst, const void* src, size_t len) noexcept;
void nt_copy_avx512(void* dst, const void* src, size_t len) noexcept;

// Persister::store_record_nt's kernel: each line composed in a register (the prefix, the words and the
// body by masked loads, which do not fault on masked-off bytes) and stored non-temporally.
// The record's parts are arguments (see record_shape).
void nt_record_avx512bw(void* line, const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                        uint64_t shape, void* last_line) noexcept;

}  // namespace pmlab::persist::x86_64
