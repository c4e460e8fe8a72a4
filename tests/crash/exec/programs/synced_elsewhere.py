"""Records made by rename, made durable by a sync of a file elsewhere, as a program whose own journal lives
outside the crash-tested directory commits: `run DIR OUTSIDE N [MODE]` writes version i of a record to
DIR/tmp-i and syncs it, renames it to DIR/record-i, then appends a line to OUTSIDE/journal and syncs that file
(MODE journal-synced, the default; nothing-synced: not). A file system that journals its metadata (ext4) commits the rename with that sync;
POSIX promises it only at a sync of DIR. `check DIR` exits 1 unless each record whose operation had returned
(PMLAB_CRASH_OPS_DONE) is there whole, and every record there is whole."""
import os
import sys

from versions import held, operation_marks, returned_there, write_new

mode, directory = sys.argv[1], sys.argv[2]


def record(i):
    return os.path.join(directory, "record-%d" % i)


if mode == "check":
    returned_there(record)
    for name in os.listdir(directory):
        if name.startswith("record-") and held(open(os.path.join(directory, name), "rb").read()) != int(name[7:]):
            sys.exit(f"{name} is not whole")
    sys.exit(0)

outside, how = sys.argv[3], (sys.argv[5] if len(sys.argv) > 5 else "")
begin, end = operation_marks()
journal = os.open(os.path.join(outside, "journal"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
for i in range(1, int(sys.argv[4]) + 1):
    begin()
    tmp = os.path.join(directory, "tmp-%d" % i)
    write_new(tmp, i)
    os.rename(tmp, record(i))
    os.write(journal, b"record %d\n" % i)
    if how != "nothing-synced":
        os.fsync(journal)
    end()
