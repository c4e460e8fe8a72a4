"""Two versions of a state kept as a pair of files swapped in one call, as a program that keeps its previous
state beside its current one: `init DIR` writes version 0 to DIR/current and DIR/spare and syncs them; `run DIR
N` then, for each operation i, writes version i over DIR/spare and syncs it, swaps DIR/spare and DIR/current
with renameat2's RENAME_EXCHANGE, and syncs DIR. `check DIR` exits 1 unless DIR/current holds a whole version
no older than the last operation that had returned (PMLAB_CRASH_OPS_DONE) and, where no operation was under
way, DIR/spare holds the one before it."""
import ctypes
import os
import sys

from versions import held, operation_marks, sync_directory, version

AT_FDCWD, RENAME_EXCHANGE = -100, 2
mode, directory = sys.argv[1], sys.argv[2]
current, spare = os.path.join(directory, "current"), os.path.join(directory, "spare")


def read(path):
    if not os.path.exists(path):
        sys.exit(f"{os.path.basename(path)} is not there")
    return held(open(path, "rb").read())


if mode == "init":
    for path in (current, spare):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, version(0))
        os.fsync(fd)
        os.close(fd)
    sync_directory(directory)
elif mode == "check":
    done, begun = (int(os.environ.get(v, "0")) for v in ("PMLAB_CRASH_OPS_DONE", "PMLAB_CRASH_OPS_BEGUN"))
    now = read(current)
    if now is None or now < done:
        sys.exit(f"current holds {now}, but {done} versions had returned")
    if begun == done and read(spare) != max(now - 1, 0):
        sys.exit(f"spare holds {read(spare)}, not the version before {now}")
else:
    begin, end = operation_marks()
    libc = ctypes.CDLL(None, use_errno=True)
    for i in range(1, int(sys.argv[3]) + 1):
        begin()
        fd = os.open(spare, os.O_WRONLY)
        os.pwrite(fd, version(i), 0)
        os.fsync(fd)
        os.close(fd)
        if libc.renameat2(AT_FDCWD, spare.encode(), AT_FDCWD, current.encode(), RENAME_EXCHANGE) != 0:
            sys.exit(os.strerror(ctypes.get_errno()))
        sync_directory(directory)
        end()
