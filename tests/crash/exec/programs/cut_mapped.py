"""A file cut short while it is mapped: `run FILE` maps 8 KiB of FILE, stores "hello" at its start and
"world" in its second page, syncs, cuts the file to 100 bytes with os.ftruncate (the mapping stays), stores
"HELLO" over the first word and syncs again. `check FILE` exits 1 unless FILE is 8 KiB long at the first
crash point (the first sync) and 100 bytes long after it (PMLAB_CRASH_POINT), holding nothing then past its
first word."""
import mmap
import os
import sys

mode, path = sys.argv[1], sys.argv[2]

if mode == "check":
    data = open(path, "rb").read()
    point = int(os.environ["PMLAB_CRASH_POINT"])
    if len(data) != (8192 if point == 1 else 100):
        sys.exit(f"{len(data)} bytes long at crash point {point}")
    if point > 1 and (data[:5] not in (b"hello", b"HELLO") or any(data[5:])):
        sys.exit(f"cut to 100 bytes, but holds {data!r}")
    sys.exit(0)

fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, 8192)
view = mmap.mmap(fd, 8192)
view[0:5] = b"hello"
view[5000:5005] = b"world"
view.flush()
os.ftruncate(fd, 100)
view[0:5] = b"HELLO"
view.flush()
