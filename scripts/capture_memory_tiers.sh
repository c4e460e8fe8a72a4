#!/usr/bin/env bash
# Copies the part of /sys that `pmlab info` reads for the memory tiers into DEST/sys, so the machine's tiers
# can be read elsewhere: pmlab info --sysfs-root DEST (and a test fixture, as tests/platform/sysfs/).
# Only small attribute files are copied, and links under /sys/bus/*/devices are kept as links with their
# targets copied beside them. Usage: scripts/capture_memory_tiers.sh DEST
set -euo pipefail
dest=${1:?usage: $0 DEST}
# Into a tree already there, the copy would mix two machines (this one's nodes beside the other's).
if [ -e "$dest/sys" ]; then
  echo "$0: $dest/sys exists: capture into a new directory (or remove it first)" >&2
  exit 2
fi
copy() {  # copy FILE: one sysfs attribute, as text
  local f=$1
  [ -r "$f" ] || return 0
  mkdir -p "$dest$(dirname "$f")"
  cat "$f" > "$dest$f" 2>/dev/null || rm -f "$dest$f"
}
for node in /sys/devices/system/node/node*; do
  for f in cpulist distance meminfo; do copy "$node/$f"; done
  for initiators in "$node"/access*/initiators; do
    [ -d "$initiators" ] || continue
    for f in read_latency write_latency read_bandwidth write_bandwidth; do copy "$initiators/$f"; done
    for i in "$initiators"/node*; do mkdir -p "$dest$initiators" && : > "$dest$i"; done
  done
done
for f in online has_cpu has_memory; do copy "/sys/devices/system/node/$f"; done
for bus in cxl dax; do
  for link in /sys/bus/$bus/devices/*; do
    [ -L "$link" ] || continue
    real=$(readlink -f "$link")
    mkdir -p "$dest$(dirname "$link")"
    ln -sfn "$(readlink "$link")" "$dest$link"
    for f in mode size interleave_ways target_node numa_node ram/size pmem/size; do copy "$real/$f"; done
    for t in "$real"/target[0-9]*; do [ -e "$t" ] && copy "$t"; done
    if [ -L "$real/driver" ]; then mkdir -p "$dest$real" && ln -sfn "$(readlink "$real/driver")" "$dest$real/driver"; fi
  done
done
echo "memory tiers of $(hostname) copied to $dest (read them with: pmlab info --sysfs-root $dest)"
