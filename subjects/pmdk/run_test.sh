#!/usr/bin/env bash
# run_test.sh NAME STEP... : the steps of one Subjects.* test against a scratch pool that is removed
# whatever happens.
#
# A step is words up to a lone @@ (or the end): directives first, then the command and its arguments.
#   @rc=N          the exit status it must have (default 0)
#   @err=REGEX     its stderr must match (grep -E)
#   @lines=N       its stderr must have exactly N lines
#   @env=VAR=VAL   run it with VAR=VAL in its environment
# @POOL@ inside any word is the scratch pool's path (under /dev/shm, or TMPDIR where that is missing).
# PMEM_IS_PMEM_FORCE=1 is set, so libpmem never calls msync on the RAM-backed file.
set -u

name=${1:?usage: run_test.sh NAME STEP...}
shift
dir=/dev/shm
if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
	dir=${TMPDIR:-/tmp}
fi
pool="$dir/pmlab-subjects-${name//[^A-Za-z0-9._-]/_}-$$.pool"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$pool" "$out" "$err"' EXIT
export PMEM_IS_PMEM_FORCE=1

step=0
want_rc=0
want_err=
want_lines=
envs=()
cmd=()

run_step() {
	step=$((step + 1))
	if [ ${#cmd[@]} -eq 0 ]; then
		echo "run_test.sh: step $step has no command" >&2
		exit 2
	fi
	env "${envs[@]+"${envs[@]}"}" "${cmd[@]}" >"$out" 2>"$err"
	local rc=$?
	local why=
	if [ "$rc" -ne "$want_rc" ]; then
		why="exit status $rc, expected $want_rc"
	elif [ -n "$want_err" ] && ! grep -Eq -- "$want_err" "$err"; then
		why="stderr does not match /$want_err/"
	elif [ -n "$want_lines" ] && [ "$(wc -l <"$err")" -ne "$want_lines" ]; then
		why="stderr has $(wc -l <"$err") lines, expected $want_lines"
	fi
	echo "step $step: ${envs[*]+${envs[*]} }${cmd[*]} -> $rc"
	sed 's/^/    stdout: /' "$out"
	sed 's/^/    stderr: /' "$err"
	if [ -n "$why" ]; then
		echo "FAILED at step $step: $why"
		exit 1
	fi
	want_rc=0
	want_err=
	want_lines=
	envs=()
	cmd=()
}

for word in "$@"; do
	word=${word//@POOL@/$pool}
	if [ "$word" = "@@" ]; then
		run_step
		continue
	fi
	if [ ${#cmd[@]} -eq 0 ]; then
		case $word in
		@rc=*) want_rc=${word#@rc=}; continue ;;
		@err=*) want_err=${word#@err=}; continue ;;
		@lines=*) want_lines=${word#@lines=}; continue ;;
		@env=*) envs+=("${word#@env=}"); continue ;;
		esac
	fi
	cmd+=("$word")
done
if [ ${#cmd[@]} -gt 0 ]; then
	run_step
fi
echo "all $step steps passed"
