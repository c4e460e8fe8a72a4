#!/bin/sh
# Instructions per operation of a program linked with libpmlab.so and with libpmlab.a, counted with
# callgrind: the difference of two runs (N and 2N operations) over N, so setup and teardown cancel out.
#   scripts/linkage/count.sh [BUILD_DIR] [N]      (needs valgrind; BUILD_DIR defaults to build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" 2> /dev/null && pwd) || { echo "count.sh: no build directory ${1:-$root/build}" >&2; exit 2; }
n=${2:-20000}
command -v valgrind > /dev/null || { echo "count.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
for lib in libpmlab.so libpmlab.a; do
  [ -e "$build/$lib" ] || { echo "count.sh: no $build/$lib (build it first: make)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-std=c++20 -O2 -I$root/include -I$build/include"
# Instructions of one run of $1 with $2 operations, into $3 (a failed run stops the script).
count() {
  if ! valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$1" "$2" > "$work/run.log" 2>&1; then
    echo "count.sh: $1 $2 failed:" >&2
    cat "$work/run.log" >&2
    exit 1
  fi
  callgrind_annotate "$work/callgrind.out" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }' > "$3"
}
# Instructions per operation of $1, into $2: the runs of N and 2N operations differ by N operations.
per_op() {
  count "$1" "$n" "$work/once"
  count "$1" $((2 * n)) "$work/twice"
  echo $(( ($(cat "$work/twice") - $(cat "$work/once")) / n )) > "$2"
}
for program in transfers tree_ops; do
  c++ $flags "$here/$program.cpp" -o "$work/$program.so" -L"$build" -lpmlab -Wl,-rpath,"$build"
  c++ $flags "$here/$program.cpp" -o "$work/$program.a" "$build/libpmlab.a" -lpmem2 -lpmem -lnuma -lpthread
  per_op "$work/$program.so" "$work/shared"
  per_op "$work/$program.a" "$work/static"
  shared=$(cat "$work/shared")
  static=$(cat "$work/static")
  echo "$program: libpmlab.so $shared, libpmlab.a $static instructions per operation" \
    "($(python3 -c "print(f'{$shared / $static:.3f}')")x)"
done
