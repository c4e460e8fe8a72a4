"""A file replaced whole, as many programs keep their state: version i is written to FILE.tmp, synced with
os.fsync, then renamed over FILE. `update FILE N [sync-after-rename] [mkstemp]`: sync-after-rename is the bug
(the new version is synced only after the rename); with mkstemp each version goes to a temporary file of a
name made up as it goes (tempfile.mkstemp beside FILE, as `sed -i` does). `check FILE` exits 1 unless FILE
holds one whole version."""
import os
import sys
import tempfile

mode, path = sys.argv[1], sys.argv[2]


def version(i):
    return (b"version %d " % i).ljust(200, b"v")


if mode == "check":
    data = open(path, "rb").read() if os.path.exists(path) else b""
    if not any(data == version(i) for i in range(1000)):
        sys.exit(f"{os.path.basename(path)} holds {data[:12]!r}... ({len(data)} bytes), no whole version")
    sys.exit(0)

late, named = "sync-after-rename" in sys.argv[4:], "mkstemp" in sys.argv[4:]
for i in range(1, int(sys.argv[3]) + 1):
    if named:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)))
    else:
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, version(i))
    if not late:
        os.fsync(fd)
    os.rename(tmp, path)
    if late:
        os.fsync(fd)
    os.close(fd)
