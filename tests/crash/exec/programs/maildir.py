"""Messages delivered to a mail directory as the Maildir convention has it: each written to DIR/tmp under a name
of its own and synced with os.fsync, then renamed to DIR/new (with by-link after MODE, linked there and
unlinked from DIR/tmp, as the convention first had it). `deliver DIR N [MODE]` delivers N messages, each an
operation (marked through pmlab's runtime when it traces the program); MODE sync-new then syncs DIR/new,
sync-both DIR/tmp and DIR/new. With archive after MODE, one more operation moves the first message out of
DIR/new (to DIR-first beside DIR) and syncs DIR/new, moves DIR/new out too (to DIR-archive), makes DIR/new
again and syncs DIR and its parent (archive-unsynced: DIR/new is not synced after the message left it). `check
DIR [archive N]` exits 1 unless DIR holds tmp and new and nothing else, each delivery that had returned
(PMLAB_CRASH_OPS_DONE) is in DIR/new whole, and nothing else is there but whole messages; once the archiving
(operation N + 1) had begun, new/ may be gone or hold none of them, and once it had returned, it holds none."""
import os
import sys

from versions import held, operation_marks, sync_directory, write_new

mode, maildir = sys.argv[1], sys.argv[2]
tmp, new = os.path.join(maildir, "tmp"), os.path.join(maildir, "new")


def name(i):
    return "msg-%d" % i


if mode == "check":
    done, begun = (int(os.environ.get(v, "0")) for v in ("PMLAB_CRASH_OPS_DONE", "PMLAB_CRASH_OPS_BEGUN"))
    archived = int(sys.argv[4]) if sys.argv[3:4] == ["archive"] else None
    archiving = archived is not None and begun > archived
    for f in os.listdir(maildir):
        if f not in ("tmp", "new", "cur"):
            sys.exit(f"{f} is in the mail directory")
    for d in (tmp, new):
        if not os.path.isdir(d) and not (archiving and d == new):
            sys.exit(f"{os.path.basename(d)}/ is not there")
    if archiving and os.path.isdir(new) and os.listdir(new) and done > archived:
        sys.exit(f"new/ holds {sorted(os.listdir(new))}, but the archiving had returned")
    for i in range(1, done + 1 if not archiving else 0):
        if not os.path.exists(os.path.join(new, name(i))):
            sys.exit(f"new/{name(i)} is not there, but its delivery had returned")
    for f in os.listdir(new) if os.path.isdir(new) else []:
        if held(open(os.path.join(new, f), "rb").read()) != int(f[len("msg-"):]):
            sys.exit(f"new/{f} is not a whole message")
    sys.exit(0)


begin, end = operation_marks()
how = sys.argv[4] if len(sys.argv) > 4 else ""
for i in range(1, int(sys.argv[3]) + 1):
    begin()
    write_new(os.path.join(tmp, name(i)), i)
    if "by-link" in sys.argv[5:]:
        os.link(os.path.join(tmp, name(i)), os.path.join(new, name(i)))
        os.unlink(os.path.join(tmp, name(i)))
    else:
        os.rename(os.path.join(tmp, name(i)), os.path.join(new, name(i)))
    if how == "sync-both":
        sync_directory(tmp)
    if how in ("sync-new", "sync-both"):
        sync_directory(new)
    end()
if "archive" in sys.argv[5:] or "archive-unsynced" in sys.argv[5:]:
    begin()
    os.rename(os.path.join(new, name(1)), maildir.rstrip("/") + "-first")
    if "archive" in sys.argv[5:]:
        sync_directory(new)
    os.rename(new, maildir.rstrip("/") + "-archive")
    os.mkdir(new)
    sync_directory(maildir)
    sync_directory(os.path.dirname(os.path.abspath(maildir)))
    end()
