#!/usr/bin/env bash
# pmdk_pi_check.sh PROGRAM POOL THREADS OPS: the judge of PMDK's pi example (pmdk-pi) for crash exec, after
# `pmdk-pi POOL calc THREADS OPS` on a pool that held no task. calc puts THREADS tasks on the to-do list, one
# atomic list insert each (task i sums the Leibniz series' terms i*OPS/THREADS up to the next task's first),
# then runs a thread per task: it sums its terms, persists the sum, and moves the task to the done list with
# one atomic list move. After a crash the example's own recovery is `finish`: PMDK's, then every task still to
# do. It must leave tasks 0..k-1 done, for some k, each once and with its sum, and nothing to do.
set -u
usage="usage: pmdk_pi_check.sh PROGRAM POOL THREADS OPS"
program=${1:?$usage}
pool=${2:?$usage}
threads=${3:?$usage}
ops=${4:?$usage}
if ! out=$("$program" "$pool" finish 2>&1); then
	echo "pmdk-pi finish failed: $(head -c 200 <<<"$out")" >&2
	exit 1
fi
todo=$("$program" "$pool" todo 2>&1)
if [ -n "$todo" ]; then
	echo "tasks still to do after finish: $(head -c 200 <<<"$todo")" >&2
	exit 1
fi
"$program" "$pool" done | awk -v threads="$threads" -v ops="$ops" '
	function fail(why) { print why > "/dev/stderr"; failed = 1; exit 1 }
	{
		# (start - stop) = sum
		if (!match($0, /^\(([0-9]+) - ([0-9]+)\) = (-?[0-9.]+)$/)) fail("not a task of pmdk-pi: " $0)
		split(substr($0, 2), f, /[ ()=-]+/)
		start = f[1] + 0; stop = f[2] + 0; sum = $NF + 0
		per = int(ops / threads)
		task = int(start / per)
		if (start != task * per || stop != start + per || task >= threads) fail("no task of calc spans " start " - " stop)
		if (task in seen) fail("task " task " is done twice")
		seen[task] = 1
		want = 0
		for (i = start; i < stop; ++i) want += (i % 2 == 0 ? 1 : -1) / (2 * i + 1)
		if ((sum - want) > 1e-9 || (want - sum) > 1e-9) fail("task " task " holds " sum ", not its sum " want)
		++done
	}
	END {
		if (failed) exit 1
		for (t = 0; t < done; ++t)
			if (!(t in seen)) { print "task " t " is missing, though " done " are done" > "/dev/stderr"; exit 1 }
	}'
