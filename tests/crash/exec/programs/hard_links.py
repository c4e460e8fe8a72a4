"""Tables kept under two names, as a database's checkpoint keeps its files by hard links: `run DIR N [MODE]`
makes DIR/snap, then for each operation i writes table-i to DIR (a new file, synced), links it as
DIR/snap/table-i (by link(2) and linkat(2) in turn), syncs DIR/snap and DIR, and takes the first name of the table before it away (the snapshot
keeps that one), syncing DIR again. MODE unsynced-snap leaves DIR/snap unsynced. `check DIR` exits 1 unless
each table whose operation had returned (PMLAB_CRASH_OPS_DONE) is in DIR/snap whole, every table there under
either name is whole but one the crash cut short, and a table there under both names is one file."""
import ctypes
import os
import sys

from versions import held, operation_marks, sync_directory, write_new

mode, directory = sys.argv[1], sys.argv[2]
snap = os.path.join(directory, "snap")


def table(i, at=directory):
    return os.path.join(at, "table-%d" % i)


if mode == "check":
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    for i in range(1, done + 1):
        if not os.path.exists(table(i, snap)):
            sys.exit(f"snap/table-{i} is not there, but its operation had returned")
    begun = int(os.environ.get("PMLAB_CRASH_OPS_BEGUN", "0"))
    for i in range(1, begun + 1):
        names = [p for p in (table(i), table(i, snap)) if os.path.exists(p)]
        if i <= done and any(held(open(p, "rb").read()) != i for p in names):
            sys.exit(f"table-{i} is not whole under {names}")
        if len(names) == 2 and os.stat(names[0]).st_ino != os.stat(names[1]).st_ino:
            sys.exit(f"table-{i} and snap/table-{i} are two files")
    sys.exit(0)


begin, end = operation_marks()
os.mkdir(snap)
sync_directory(directory)
for i in range(1, int(sys.argv[3]) + 1):
    begin()
    write_new(table(i), i)
    if i % 2:  # the C library's link(2), where os.link calls linkat
        if ctypes.CDLL(None, use_errno=True).link(table(i).encode(), table(i, snap).encode()) != 0:
            sys.exit(os.strerror(ctypes.get_errno()))
    else:
        os.link(table(i), table(i, snap))
    if sys.argv[4:] != ["unsynced-snap"]:
        sync_directory(snap)
    sync_directory(directory)
    if i > 1:
        os.unlink(table(i - 1))
        sync_directory(directory)
    end()
