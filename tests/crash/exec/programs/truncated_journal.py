"""A record kept in place behind an undo journal that commits by cutting the journal to nothing, as SQLite's
journal_mode=truncate does. `init DB` writes version 0. `update DB N [MODE]` makes N updates, each an
operation (marked through pmlab's runtime when it traces the program): the record's old content written to
DB-journal with its CRC-32 and synced, the new version written over DB and synced, then the journal cut to
nothing with os.ftruncate and synced. MODE open-trunc cuts it by opening it with O_TRUNC instead, and
truncate-path with os.truncate; truncate-first (the bug) cuts it before the new version is synced, and
unsynced-cut (a bug where the file system makes a cut durable only at a sync) never syncs the cut journal.
`check DB` rolls back a whole journal, as
recovery does, then exits 1 unless DB holds one whole version, no older than the updates that had returned
(PMLAB_CRASH_OPS_DONE)."""
import os
import sys
import zlib

from versions import held, opened, operation_marks, version

mode, db = sys.argv[1], sys.argv[2]
journal = db + "-journal"


def whole(record):
    return len(record) == 256 and zlib.crc32(record[:252]).to_bytes(4, "little") == record[252:]


def read(path):
    return open(path, "rb").read() if os.path.exists(path) else b""


if mode == "check":
    record, saved = read(db), read(journal)
    if whole(saved):  # a transaction was under way: put the old content back
        with open(db, "r+b") as f:
            f.write(saved)
        record = saved
    kept = held(record)
    if kept is None:
        sys.exit(f"{os.path.basename(db)} holds {record[:12]!r}... ({len(record)} bytes), no whole version")
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    if kept < done:
        sys.exit(f"version {kept}, but {done} updates had returned")
    sys.exit(0)

dbfd = opened(db, mode)

op_begin, op_end = operation_marks()
how = sys.argv[4] if len(sys.argv) > 4 else "ftruncate"
jfd = os.open(journal, os.O_WRONLY | os.O_CREAT, 0o600)
for i in range(1, int(sys.argv[3]) + 1):
    op_begin()
    os.pwrite(jfd, os.pread(dbfd, 256, 0), 0)
    os.fsync(jfd)
    os.pwrite(dbfd, version(i), 0)
    if how == "truncate-first":
        os.ftruncate(jfd, 0)
    os.fsync(dbfd)
    if how == "open-trunc":
        os.close(jfd)
        jfd = os.open(journal, os.O_WRONLY | os.O_TRUNC)
    elif how == "truncate-path":
        os.truncate(journal, 0)
    elif how in ("ftruncate", "unsynced-cut"):
        os.ftruncate(jfd, 0)
    if how != "unsynced-cut":
        os.fsync(jfd)
    op_end()
