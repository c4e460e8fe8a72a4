// Interleavings a multi-threaded program does not take by itself (`pmlab crash exec --schedules`).
//
// Exec mode sees the one interleaving a run takes, and a program left to itself tends to take the same
// one every run: a thread that persists quickly finishes before another reaches the same data. With
// PMLAB_TRACE_SCHEDULE=<seed>, a thread about to make a persistence event (a write-back, a fence, an
// operation mark) sometimes pauses first, until the program's other threads have made a few events of their
// own, or until a wait runs out, since they may be waiting for this one (a lock it holds, a barrier).
// Whether an event pauses, and for how many of the others' events, is drawn from the seed and the thread's
// index, so each seed brings about other orders of the threads' persistence calls and of the stores between
// them. A pause never changes what the program does, only when.
#pragma once

#include <string>

namespace pmlab_trace::detail {

// Reads PMLAB_TRACE_SCHEDULE at the runtime's start; absent or 0: the program's own schedule.
void read_schedule();
// Before every event of the traced process, on the thread that makes it, outside the tracer's lock.
void before_event() noexcept;
// What the schedule did, for the trace's notes; empty for the program's own schedule.
std::string schedule_note();

}  // namespace pmlab_trace::detail
