"""A log of 16-byte records in a mapped FILE, made durable by syncing the file as many Python programs do:
`append FILE N [unsynced-record]` writes record i, os.fdatasync, then the count, os.fsync (with
unsynced-record, the record waits for the count's sync); `check FILE` exits 1 when a counted record is not
whole. `serve [die-every K]` is the same check as pmlab crash exec's --check-server: a request per line on
stdin (a JSON object, the image's path in PMLAB_CRASH_IMAGE), answered "ok" or what is wrong on stdout; with
die-every K it exits at every K-th request instead, as a server that crashes does; with remember-ok it
answers "ok" to every request after the first log it found whole, as a server that keeps what it opened does."""
import json
import mmap
import os
import struct
import sys


def record(i):
    return (i + 1, (i + 1) * 0x9E3779B97F4A7C15 % 2**64)


def wrong_in(path):
    """What is wrong with the log in the file at `path`, or None."""
    try:
        with open(path, "rb") as f:
            log = f.read(4096).ljust(4096, b"\0")  # a file not yet grown holds zeros there
    except FileNotFoundError:
        return None  # not made yet: an empty log
    count = struct.unpack_from("<Q", log, 0)[0]
    for i in range(count):
        if 64 + 16 * (i + 1) > len(log) or struct.unpack_from("<QQ", log, 64 + 16 * i) != record(i):
            return f"record {i} of {count} counted is not whole"
    return None


mode = sys.argv[1]
if mode == "serve":
    die_every = int(sys.argv[3]) if sys.argv[2:3] == ["die-every"] else 0
    remember_ok, found_whole = sys.argv[2:3] == ["remember-ok"], False
    for n, line in enumerate(sys.stdin, start=1):
        if die_every and n % die_every == 0:
            os._exit(3)
        wrong = None if found_whole else wrong_in(json.loads(line)["PMLAB_CRASH_IMAGE"])
        found_whole = remember_ok and not wrong
        print(wrong or "ok", flush=True)
    sys.exit(0)

path = sys.argv[2]
if mode == "check":
    sys.exit(wrong_in(path))

fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
if os.fstat(fd).st_size == 0:
    os.ftruncate(fd, 4096)
log = mmap.mmap(fd, 4096)

for i in range(int(sys.argv[3])):
    struct.pack_into("<QQ", log, 64 + 16 * i, *record(i))
    if sys.argv[4:] != ["unsynced-record"]:
        os.fdatasync(fd)
    struct.pack_into("<Q", log, 0, i + 1)
    os.fsync(fd)
