"""Records written to files that have no name until they are whole, as O_TMPFILE lets a program make them: `run
DIR N [MODE]` first leaves two scratch files in DIR that never get a name (one made with O_TMPFILE, one
unlinked while open, each written and synced), then for each operation i writes version i to a new O_TMPFILE
file in DIR, syncs it, names it DIR/record-i with linkat(2) and syncs DIR. The name comes from /proc/self/fd/N
followed (open(2)'s way), or with MODE empty-path from AT_EMPTY_PATH on the open file, which Linux before 6.10
grants only with CAP_DAC_READ_SEARCH (`can-name-by-fd DIR` exits 0 where this process may). MODE
unsynced-data leaves the file's data unsynced, unsynced-dir leaves DIR unsynced. `check DIR` exits 1 unless each record whose operation had returned (PMLAB_CRASH_OPS_DONE) is there
whole, every record there is whole, and DIR holds nothing else."""
import ctypes
import os
import sys

from versions import held, operation_marks, returned_there, sync_directory, version

AT_FDCWD, AT_SYMLINK_FOLLOW, AT_EMPTY_PATH = -100, 0x400, 0x1000

mode, directory = sys.argv[1], sys.argv[2]
how = sys.argv[4] if len(sys.argv) > 4 else "proc"


def record(i):
    return os.path.join(directory, "record-%d" % i)


if mode == "check":
    returned_there(record)
    for name in sorted(os.listdir(directory)):
        if not name.startswith("record-"):
            sys.exit(f"{name} is in the directory")
        with open(os.path.join(directory, name), "rb") as f:
            if held(f.read()) != int(name[len("record-"):]):
                sys.exit(f"{name} is not whole")
    sys.exit(0)

libc = ctypes.CDLL(None, use_errno=True)


def written(fd, i):
    os.write(fd, version(i))
    if how != "unsynced-data":
        os.fsync(fd)


def scratch():
    """A file made with O_TMPFILE and one unlinked while open, both written and synced, neither ever named."""
    fd = os.open(directory, os.O_TMPFILE | os.O_RDWR, 0o600)
    written(fd, 0)
    os.close(fd)
    path = os.path.join(directory, "scratch")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    written(fd, 0)
    os.close(fd)


def name(fd, path):
    if how == "empty-path":
        r = libc.linkat(fd, b"", AT_FDCWD, path.encode(), AT_EMPTY_PATH)
    else:
        r = libc.linkat(AT_FDCWD, b"/proc/self/fd/%d" % fd, AT_FDCWD, path.encode(), AT_SYMLINK_FOLLOW)
    if r != 0:
        sys.exit(f"linkat to {path}: {os.strerror(ctypes.get_errno())}")


if mode == "can-name-by-fd":
    how = "empty-path"
    probe = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600)
    name(probe, os.path.join(directory, "named-by-fd"))
    os.unlink(os.path.join(directory, "named-by-fd"))
    sys.exit(0)


begin, end = operation_marks()
scratch()
for i in range(1, int(sys.argv[3]) + 1):
    begin()
    fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600)
    written(fd, i)
    name(fd, record(i))
    os.close(fd)
    if how != "unsynced-dir":
        sync_directory(directory)
    end()
