#!/usr/bin/env bash
# pmdk2_log_check.sh PROGRAM IMAGE APPEND... : the judge of libpmem2's log example (pmdk2-log) for crash
# exec. Each APPEND is what one command appended: an `append`'s string, or an `appendv`'s strings joined,
# since appendv persists its strings and then moves the log's end once. The log must hold the first k
# APPENDs back to back, for some k, and nothing else. PROGRAM's `dump` prints the log's bytes and a newline.
set -u
program=${1:?usage: pmdk2_log_check.sh PROGRAM IMAGE APPEND...}
image=${2:?usage: pmdk2_log_check.sh PROGRAM IMAGE APPEND...}
shift 2
held=$(mktemp)
want=$(mktemp)
trap 'rm -f "$held" "$want"' EXIT
if ! "$program" "$image" dump >"$held" 2>&1; then
	echo "pmdk2-log dump failed: $(head -c 200 "$held")" >&2
	exit 1
fi
# Files, not shell strings: a torn end may show bytes the log never held, zeros among them.
prefix=""
printf '\n' >"$want"
cmp -s "$held" "$want" && exit 0
k=0
for append in "$@"; do
	prefix+=$append
	k=$((k + 1))
	printf '%s\n' "$prefix" >"$want"
	cmp -s "$held" "$want" && exit 0
done
echo "the log holds $(($(wc -c <"$held") - 1)) bytes that are no prefix of the $k appends" >&2
exit 1
