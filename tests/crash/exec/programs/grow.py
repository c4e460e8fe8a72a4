"""A program that persists record A in a one-page FILE, grows its mapping to two pages (mmap.resize:
ftruncate, then mremap, which may move it), then persists record B in the new page and commit C beside A,
or (commit-first) C before B."""
import mmap
import os
import sys

fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 4096)
m = mmap.mmap(fd, 4096)
m[0:64] = b"A" * 64
m.flush(0, 4096)
m.resize(8192)
steps = [(4096, b"B"), (64, b"C")]
if sys.argv[2] == "commit-first":
    steps.reverse()
for at, byte in steps:
    m[at:at + 64] = byte * 64
    m.flush(at & ~4095, 4096)
