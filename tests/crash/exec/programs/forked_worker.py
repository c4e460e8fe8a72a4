"""A program that maps nothing itself: its forked worker maps FILE and persists two records in turn with
msync, record A then record B, or (second-first) B then A. The check: B without A is a crash state the
first order never leaves."""
import mmap
import os
import sys

records = [(0, b"A"), (4096, b"B")]
if sys.argv[2] == "second-first":
    records.reverse()
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    os.ftruncate(fd, 8192)
    m = mmap.mmap(fd, 8192)
    for at, byte in records:
        m[at:at + 64] = byte * 64
        m.flush(at, 4096)
    os._exit(0)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
