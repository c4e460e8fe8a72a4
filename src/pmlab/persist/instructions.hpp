// The cache-line instructions themselves, one line each, as inline assembly.
//
// Inline assembly rather than intrinsics: the intrinsics need -mclwb / -mclflushopt (or a target
// attribute), and a function compiled for a newer ISA cannot be inlined into generic code. The
// assembler knows the mnemonics; which of them may run is decided at run time from CPUID.
#pragma once

#include <cstdint>

namespace pmlab::persist {

inline constexpr uintptr_t kCacheLine = 64;

namespace isa {

inline void clflush(const void* line) noexcept {
  __asm__ volatile("clflush %0" : "+m"(*const_cast<volatile char*>(static_cast<const volatile char*>(line))));
}
inline void clflushopt(const void* line) noexcept {
  __asm__ volatile("clflushopt %0" : "+m"(*const_cast<volatile char*>(static_cast<const volatile char*>(line))));
}
inline void clwb(const void* line) noexcept {
  __asm__ volatile("clwb %0" : "+m"(*const_cast<volatile char*>(static_cast<const volatile char*>(line))));
}
// A non-temporal 8-byte store (SSE2: every x86_64 has it).
inline void movnti(uint64_t* dst, uint64_t value) noexcept {
  __asm__ volatile("movnti %1, %0" : "=m"(*dst) : "r"(value));
}
inline void sfence() noexcept { __asm__ volatile("sfence" ::: "memory"); }
// Orders the compiler only: where a fence is not needed for durability, reordering must still not
// move stores across the point the design marked.
inline void compiler_fence() noexcept { __asm__ volatile("" ::: "memory"); }

}  // namespace isa
}  // namespace pmlab::persist
