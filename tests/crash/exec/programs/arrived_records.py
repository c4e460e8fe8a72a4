"""Records written outside the crash-tested directory and moved into it, as a program that keeps its temporary
files elsewhere does: `run DIR OUTSIDE N [MODE]` writes version i of a record to OUTSIDE/tmp-i for each
operation i and syncs it there, renames it to DIR/record-i, writes version i again after it through the
descriptor it still holds (the record is then 512 bytes), syncs it and syncs DIR. MODE link links it into DIR
and unlinks it from OUTSIDE instead of renaming; unsynced-dir leaves DIR unsynced; over renames each version
over DIR/state, which `init DIR` makes (version 0), and writes nothing after; prepared renames the tmp-i that
`prepare OUTSIDE N` wrote before the run, then appends the second copy through a descriptor of its own. `check DIR [over]` exits 1 unless
each record there begins with its version whole, and each whose operation had returned (PMLAB_CRASH_OPS_DONE)
is there with both copies; with over, unless DIR/state holds one version whole, one that had returned or later.
"""
import os
import sys

from versions import held, operation_marks, returned_there, sync_directory, version

mode, directory = sys.argv[1], sys.argv[2]
state = os.path.join(directory, "state")


def record(i):
    return os.path.join(directory, "record-%d" % i)


if mode == "check":
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    if sys.argv[3:] == ["over"]:
        with open(state, "rb") as f:
            v = held(f.read())
        if v is None or v < done:
            sys.exit(f"state holds version {v}, but {done} updates had returned")
        sys.exit(0)
    for name in sorted(os.listdir(directory)):
        i = int(name[len("record-"):])
        with open(os.path.join(directory, name), "rb") as f:
            content = f.read()
        if held(content[:256]) != i:
            sys.exit(f"{name} does not begin with version {i}")
        if i <= done and content != version(i) * 2:
            sys.exit(f"{name} is {len(content)} bytes, not both copies, but its operation had returned")
    returned_there(record)
    sys.exit(0)

if mode == "init":
    with open(state, "wb") as f:
        f.write(version(0))
        os.fsync(f.fileno())
    sys.exit(0)

if mode == "prepare":
    for i in range(1, int(sys.argv[3]) + 1):
        with open(os.path.join(directory, "tmp-%d" % i), "wb") as f:
            f.write(version(i))
            os.fsync(f.fileno())
    sys.exit(0)

outside, how = sys.argv[3], (sys.argv[5] if len(sys.argv) > 5 else "rename")
begin, end = operation_marks()
for i in range(1, int(sys.argv[4]) + 1):
    begin()
    tmp = os.path.join(outside, "tmp-%d" % i)
    if how == "prepared":  # written before the run: renamed in, then written through a descriptor of its own
        os.rename(tmp, record(i))
        fd = os.open(record(i), os.O_WRONLY | os.O_APPEND)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, version(i))
        os.fsync(fd)
        if how == "over":
            os.rename(tmp, state)
        elif how == "link":
            os.link(tmp, record(i))
            os.unlink(tmp)
        else:
            os.rename(tmp, record(i))
    if how != "over":
        os.write(fd, version(i))
        os.fsync(fd)
    os.close(fd)
    if how != "unsynced-dir":
        sync_directory(directory)
    end()
