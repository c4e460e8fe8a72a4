#!/usr/bin/env bash
# Copies the part of /sys that pmlab reads for the memory tiers and for what backs a pool into DEST/sys, so
# the machine's tiers can be read elsewhere: pmlab info --sysfs-root DEST (and a test fixture, as
# tests/platform/sysfs/). Only small attribute files are copied; links under /sys/bus/*/devices and
# /sys/block are kept as links with their targets' attributes copied beside them. The block devices kept
# are those in an nvdimm region (a pmem namespace, also one a CXL region provides), with the region's
# persistence_domain.
# Usage: scripts/capture_memory_tiers.sh DEST
# SYSFS_ROOT=DIR reads DIR/sys instead of /sys (a captured tree: the tests copy one through this script).
set -euo pipefail
dest=${1:?usage: $0 DEST}
src=""
if [ -n "${SYSFS_ROOT:-}" ]; then
  src=$(readlink -f "$SYSFS_ROOT")
  [ -d "$src/sys" ] || { echo "$0: SYSFS_ROOT=$SYSFS_ROOT holds no sys/" >&2; exit 2; }
fi
# Into a tree already there, the copy would mix two machines (this one's nodes beside the other's).
if [ -e "$dest/sys" ]; then
  echo "$0: $dest/sys exists: capture into a new directory (or remove it first)" >&2
  exit 2
fi
to() { echo "$dest${1#"$src"}"; }  # to PATH: where a path under the source lands in DEST
copy() {  # copy FILE: one sysfs attribute, as text
  local f=$1
  [ -f "$f" ] && [ -r "$f" ] || return 0
  mkdir -p "$(dirname "$(to "$f")")"
  cat "$f" > "$(to "$f")" 2>/dev/null || rm -f "$(to "$f")"
}
keep_link() {  # keep_link LINK: the link as it is, and the directory it names
  local link=$1
  mkdir -p "$(dirname "$(to "$link")")" "$(to "$(readlink -f "$link")")"
  ln -sfn "$(readlink "$link")" "$(to "$link")"
}
nodes=$src/sys/devices/system/node
for node in "$nodes"/node*; do
  [ -d "$node" ] || continue
  for f in cpulist distance meminfo; do copy "$node/$f"; done
  for initiators in "$node"/access*/initiators; do
    [ -d "$initiators" ] || continue
    for f in read_latency write_latency read_bandwidth write_bandwidth; do copy "$initiators/$f"; done
    for i in "$initiators"/node*; do mkdir -p "$(to "$initiators")" && : > "$(to "$i")"; done
  done
done
for f in online has_cpu has_memory; do copy "$nodes/$f"; done
for bus in cxl dax; do
  for link in "$src"/sys/bus/$bus/devices/*; do
    [ -L "$link" ] || continue
    real=$(readlink -f "$link")
    keep_link "$link"
    for f in mode size interleave_ways target_node numa_node ram/size pmem/size; do copy "$real/$f"; done
    for t in "$real"/target[0-9]*; do [ -e "$t" ] && copy "$t"; done
    if [ -L "$real/driver" ]; then keep_link "$real/driver"; fi
  done
done
# A pool's backing: its block device, up through the nvdimm region to a CXL region if one provides it.
for link in "$src"/sys/block/*; do
  [ -L "$link" ] || continue
  real=$(readlink -f "$link")
  case $real in */ndbus[0-9]*/region[0-9]*) ;; *) continue ;; esac
  keep_link "$link"
  dir=$real
  while [ "$dir" != "$src/sys" ] && [ "$dir" != / ]; do
    copy "$dir/persistence_domain"
    dir=$(dirname "$dir")
  done
done
echo "memory tiers of ${src:-$(hostname)} copied to $dest (read them with: pmlab info --sysfs-root $dest)"
