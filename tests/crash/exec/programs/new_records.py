"""Records kept each in a file of its own, as a store that keeps every new object in a new file does (a mail
directory's messages, a blob store's blobs). `add DIR N [dir-sync] [new-dir [parent-sync]]` adds N records,
each an operation (marked through pmlab's runtime when it traces the program): record i written to
DIR/record-<i>, a new file, and synced with os.fsync; with dir-sync DIR is synced after it too, which POSIX
asks for before a new file's name is durable (fsync(2)). With new-dir the records go to DIR/records, a
directory the program makes first (os.mkdir), and dir-sync syncs that one; parent-sync syncs DIR after
making it. With publish, one more operation renames DIR/records to DIR/published and syncs DIR (not with
publish-unsynced). `check DIR [new-dir] [publish N]` exits 1 unless each record that had returned
(PMLAB_CRASH_OPS_DONE) is there (in DIR/published once the N records and the publishing had returned), and
each there is whole but the last, which a crash may have cut short."""
import os
import sys

from versions import held, operation_marks, sync_directory, write_new

mode, directory = sys.argv[1], sys.argv[2]
parent = directory
if "new-dir" in sys.argv[3:]:
    directory = os.path.join(parent, "records")
published = os.path.join(parent, "published")


def name(i):
    return os.path.join(directory, "record-%d" % i)


if mode == "check":
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    if "publish" in sys.argv[3:]:
        n = int(sys.argv[sys.argv.index("publish") + 1])
        if done > n and not os.path.isdir(published):
            sys.exit("published is not there, but its publishing had returned")
        if os.path.isdir(published):
            directory = published
        done = min(done, n)
    listed = os.listdir(directory) if os.path.isdir(directory) else []
    there = sorted(int(f[len("record-"):]) for f in listed if f.startswith("record-"))
    for i in range(1, done + 1):
        if i not in there:
            sys.exit(f"record-{i} is not there, but it had returned")
    for i in there:  # the last may be the one a crash cut short
        record = open(name(i), "rb").read()
        if held(record) != i and (i != there[-1] or i <= done):
            sys.exit(f"record-{i} holds {record[:12]!r}... ({len(record)} bytes), not record {i}")
    sys.exit(0)


begin, end = operation_marks()
each_synced = "dir-sync" in sys.argv[4:]
if directory != parent:
    os.mkdir(directory)
    if "parent-sync" in sys.argv[4:]:
        sync_directory(parent)
for i in range(1, int(sys.argv[3]) + 1):
    begin()
    write_new(name(i), i)
    if each_synced:
        sync_directory(directory)
    end()
if "publish" in sys.argv[4:] or "publish-unsynced" in sys.argv[4:]:
    begin()
    os.rename(directory, published)
    if "publish" in sys.argv[4:]:
        sync_directory(parent)
    end()
