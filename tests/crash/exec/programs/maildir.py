"""Messages delivered to a mail directory as the Maildir convention has it: each written to DIR/tmp under a
name of its own and synced with os.fsync, then renamed to DIR/new. `deliver DIR N [MODE]` delivers N
messages, each an operation (marked through pmlab's runtime when it traces the program); MODE sync-new then
syncs DIR/new, sync-both DIR/tmp and DIR/new. `check DIR` exits 1 unless DIR/tmp and DIR/new are there,
each delivery that had returned (PMLAB_CRASH_OPS_DONE) is in DIR/new whole, and nothing else is there but
whole messages."""
import os
import sys

from versions import held, operation_marks, sync_directory, version

mode, maildir = sys.argv[1], sys.argv[2]
tmp, new = os.path.join(maildir, "tmp"), os.path.join(maildir, "new")


def name(i):
    return "msg-%d" % i


if mode == "check":
    for d in (tmp, new):
        if not os.path.isdir(d):
            sys.exit(f"{os.path.basename(d)}/ is not there")
    for i in range(1, int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0")) + 1):
        if not os.path.exists(os.path.join(new, name(i))):
            sys.exit(f"new/{name(i)} is not there, but its delivery had returned")
    for f in os.listdir(new):
        if held(open(os.path.join(new, f), "rb").read()) != int(f[len("msg-"):]):
            sys.exit(f"new/{f} is not a whole message")
    sys.exit(0)


begin, end = operation_marks()
how = sys.argv[4] if len(sys.argv) > 4 else ""
for i in range(1, int(sys.argv[3]) + 1):
    begin()
    fd = os.open(os.path.join(tmp, name(i)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, version(i))
    os.fsync(fd)
    os.close(fd)
    os.rename(os.path.join(tmp, name(i)), os.path.join(new, name(i)))
    if how == "sync-both":
        sync_directory(tmp)
    if how in ("sync-new", "sync-both"):
        sync_directory(new)
    end()
