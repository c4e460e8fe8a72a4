#!/usr/bin/env bash
# kill_test.sh NAME ROUNDS N MAX_US OP PROGRAM [TYPE] : process crashes, the checker's native smoke test.
#
# Each round creates a pool, then runs `OP N` (insert, write) with PMDK_SUBJECT_KILL_AFTER_US set to a random
# time up to MAX_US, so the process kills itself part-way (SIGALRM); `check N` must find the pool consistent,
# and the next OP resumes from it, up to 4 kills a round. On a RAM-backed file every store the process executed
# stays in the file: these are the images of process crashes (what eADR makes of a power failure), which
# PMDK's guarantees cover, so any verdict but "consistent" is a false positive of the checker (or a real
# bug of the example). The kill times come from a fixed seed; where they land in the run is up to timing.
set -u

name=${1:?usage: kill_test.sh NAME ROUNDS N MAX_US OP PROGRAM [TYPE]}
rounds=$2
n=$3
max_us=$4
op=$5
program=$6
type=${7:-}
dir=/dev/shm
if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
	dir=${TMPDIR:-/tmp}
fi
pool="$dir/pmlab-subjects-${name//[^A-Za-z0-9._-]/_}-$$.pool"
out=$(mktemp)
trap 'rm -f "$pool" "$out"' EXIT
export PMEM_IS_PMEM_FORCE=1

run() { # COMMAND [ARG...] for the program, with the type when it takes one
	if [ -n "$type" ]; then
		"$program" "$type" "$@"
	else
		"$program" "$@"
	fi
}

RANDOM=1
kills=0
for round in $(seq 1 "$rounds"); do
	rm -f "$pool"
	if ! run create "$pool" >"$out" 2>&1; then
		echo "round $round: create failed:"
		cat "$out"
		exit 1
	fi
	for attempt in 1 2 3 4; do
		us=$(( (RANDOM * 32768 + RANDOM) % max_us + 1 ))
		PMDK_SUBJECT_KILL_AFTER_US=$us run "$op" "$pool" "$n" >"$out" 2>&1
		rc=$?
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 142 ]; then # 142: killed by SIGALRM
			echo "round $round: $op exited $rc:"
			cat "$out"
			exit 1
		fi
		[ "$rc" -eq 142 ] && kills=$((kills + 1))
		# even rounds check without completing the operations, so that the next OP resumes a crashed pool
		if ! PMDK_SUBJECT_CHECK_USE=$((round % 2)) run check "$pool" "$n" >"$out" 2>&1; then
			echo "round $round, kill after $us us: the check failed on a process-crash image:"
			cat "$out"
			exit 1
		fi
		[ "$rc" -eq 0 ] && break
	done
done
echo "$rounds rounds, $kills process crashes, every image consistent"
