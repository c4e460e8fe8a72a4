"""A record kept in DB in two slots, version i in slot i % 2, so that the version before stays whole while
the next is written; the kernel puts each version there, by a copy or by fallocate. `init DB` writes version
0. `update DB N HOW [synced|unsynced]` makes N updates, each an operation (marked through pmlab's runtime when it
traces the program) that returns once DB is synced (with `unsynced`, it is not: the bug):

- copy_file_range, sendfile, splice: version i is written to DB.staging with os.pwrite and synced, then the
  kernel copies it into its slot with that call;
- prealloc: as copy_file_range, after DB is made 64 KiB long with os.posix_fallocate and synced;
- punch: version i is written to its slot with os.pwrite and synced, then the other slot, which held version
  i - 1, is punched out (fallocate, FALLOC_FL_PUNCH_HOLE) and DB synced again.

`check DB [HOW]` exits 1 unless DB's newest whole version is no older than the updates that had returned
(PMLAB_CRASH_OPS_DONE); with `punch`, unless no version is whole that an update which returned punched out;
with `prealloc`, unless DB is 64 KiB long."""
import ctypes
import os
import sys

from versions import held, opened, operation_marks, version

SLOT = 4096

mode, db = sys.argv[1], sys.argv[2]
if mode == "check":
    data = open(db, "rb").read() if os.path.exists(db) else b""
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    versions = [v for v in (held(data[at : at + 256]) for at in (0, SLOT)) if v is not None]
    if not versions or max(versions) < done:
        sys.exit(f"newest whole version {max(versions, default=None)}, but {done} updates had returned")
    if sys.argv[3:] == ["punch"] and min(versions) + 1 <= done and len(versions) == 2:
        sys.exit(f"versions {versions} whole, but update {min(versions) + 1}, which punched one out, had returned")
    if sys.argv[3:] == ["prealloc"] and len(data) < 64 << 10:
        sys.exit(f"{len(data)} bytes long, but it was made 64 KiB long")
    sys.exit(0)

fd = opened(db, mode)

op_begin, op_end = operation_marks()
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2

how, synced = sys.argv[4], sys.argv[5:] != ["unsynced"]
staging = os.open(db + ".staging", os.O_RDWR | os.O_CREAT, 0o600)
if how == "prealloc":
    os.posix_fallocate(fd, 0, 64 << 10)
    os.fsync(fd)
for i in range(1, int(sys.argv[3]) + 1):
    op_begin()
    slot = SLOT * (i % 2)
    if how == "punch":
        os.pwrite(fd, version(i), slot)
    else:
        os.pwrite(staging, version(i), 0)
        os.fsync(staging)
        if how in ("copy_file_range", "prealloc"):
            os.copy_file_range(staging, fd, 256, 0, slot)
        elif how == "sendfile":
            os.lseek(fd, slot, os.SEEK_SET)
            os.sendfile(fd, staging, 0, 256)
        elif how == "splice":
            read, write = os.pipe()
            os.splice(staging, write, 256, offset_src=0)
            os.splice(read, fd, 256, offset_dst=slot)
            os.close(read)
            os.close(write)
    if synced:
        os.fsync(fd)
    if how == "punch":
        if libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, SLOT - slot, SLOT) != 0:
            sys.exit(f"fallocate: {os.strerror(ctypes.get_errno())}")
        if synced:
            os.fsync(fd)
    op_end()
