// The call stacks of a traced program's fences, recorded once each, and the modules that symbolize them.
// Internal to the runtime (src/pmlab-trace); every call holds the tracer's lock.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "pmlab-trace/state.hpp"

namespace pmlab_trace::detail {

// The calling thread's stack without this library's frames, as an id (recorded when first seen).
uint32_t stack_id(Tracer& t, uintptr_t site);
// Set while a trap of the program's own instruction is reported (traps.cpp): the trapped instruction's
// address + 1, as the unwinder reads it from the signal's frame, where its stack starts. The frames below it
// (the handler's, the C library's return from a signal) are not the program's.
PMLAB_TRACE_STATIC_TLS extern thread_local uintptr_t tls_trapped_at;
// The executable's path (only the executable has no name in dl_iterate_phdr's list).
std::string self_exe();
// dl_iterate_phdr callbacks: a module record for each loaded object; this library's code range (own_begin,
// own_end) for stack_id to leave out.
int write_module(dl_phdr_info* info, size_t, void* data);
int find_own(dl_phdr_info* info, size_t, void* data);

}  // namespace pmlab_trace::detail
