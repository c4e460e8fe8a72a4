"""A program that persists a record in FILE, then forks a child that persists another through the same
mapping: the child's stores are not the traced process's."""
import mmap
import os
import sys

fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 8192)
m = mmap.mmap(fd, 8192)
m[0:64] = b"A" * 64
m.flush(0, 4096)
pid = os.fork()
if pid == 0:
    m[4096:4160] = b"B" * 64
    m.flush(4096, 4096)
    os._exit(0)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
