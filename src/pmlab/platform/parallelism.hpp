// How many of a set of CPUs actually run at once, measured: a virtual machine's vCPUs may share physical
// cores with each other or with other tenants, and the guest sees neither (no steal time is reported on
// every hypervisor). A multi-thread measurement taken while the host gave fewer cores than threads
// understates what the design scales to; this probe tells the runs apart.
#pragma once

#include <vector>

namespace pmlab::platform {

// Runs a fixed stretch of multiply-bound integer work on the first CPU alone, then on every CPU of `cpus`
// at once (one pinned thread each); returns cpus.size() x (the time alone / the slowest thread's time
// together): about cpus.size() when each had a core of its own, about 1 when they took turns on one or
// were the two hyperthreads of one core.
// `work_ns`: about how long one chain runs alone.
double cores_available(const std::vector<int>& cpus, double work_ns = 2e6);

// The one-way time of a cache line handed between CPUs `a` and `b` (ns): a line two threads both write
// moves between their caches at this cost on every write. A host may place two vCPUs on cores that share
// a last-level cache (tens of ns here) or on different dies (hundreds), and move them between runs.
double core_to_core_ns(int a, int b, int round_trips = 4000);

}  // namespace pmlab::platform
