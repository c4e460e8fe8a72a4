#!/bin/sh
# Instructions per operation of a program linked with libpmlab.so and with libpmlab.a, counted with
# callgrind: the difference of two runs (N and 2N operations) over N, so setup and teardown cancel out.
#   scripts/linkage/count.sh [BUILD_DIR] [N]      (needs valgrind; BUILD_DIR defaults to build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-std=c++20 -O2 -I$root/include -I$build/include"
total() { callgrind_annotate "$1" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'; }
per_op() {
  valgrind --tool=callgrind --callgrind-out-file="$work/a.out" "$1" "$n" > /dev/null 2>&1
  valgrind --tool=callgrind --callgrind-out-file="$work/b.out" "$1" $((2 * n)) > /dev/null 2>&1
  echo $(( ($(total "$work/b.out") - $(total "$work/a.out")) / n ))
}
for program in transfers tree_ops; do
  c++ $flags "$here/$program.cpp" -o "$work/$program.so" -L"$build" -lpmlab -Wl,-rpath,"$build"
  c++ $flags "$here/$program.cpp" -o "$work/$program.a" "$build/libpmlab.a" -lpmem2 -lpmem -lnuma -lpthread
  shared=$(per_op "$work/$program.so")
  static=$(per_op "$work/$program.a")
  echo "$program: libpmlab.so $shared, libpmlab.a $static instructions per operation ($(python3 -c "print(f'{$shared / $static:.3f}')")x)"
done
