// Non-temporal copy kernels: dst must be 64-byte aligned and len a multiple of 64. Each is compiled for
// its own ISA (target attribute) and chosen at run time from CPUID, as libpmem2's memcpy_nt_*.c are.
#pragma once

#include <cstddef>

namespace pmlab::persist::x86_64 {

void nt_copy_sse2(void* dst, const void* src, size_t len) noexcept;
void nt_copy_avx2(void* dst, const void* src, size_t len) noexcept;
void nt_copy_avx512(void* dst, const void* src, size_t len) noexcept;

}  // namespace pmlab::persist::x86_64
