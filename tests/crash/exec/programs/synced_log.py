"""A log of 16-byte records in a mapped FILE, made durable by syncing the file as many Python programs do:
`append FILE N [unsynced-record]` writes record i, os.fdatasync, then the count, os.fsync (with
unsynced-record, the record waits for the count's sync); `check FILE` exits 1 when a counted record is not
whole."""
import mmap
import os
import struct
import sys

mode, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
if os.fstat(fd).st_size == 0:
    os.ftruncate(fd, 4096)
log = mmap.mmap(fd, 4096)


def record(i):
    return (i + 1, (i + 1) * 0x9E3779B97F4A7C15 % 2**64)


if mode == "check":
    count = struct.unpack_from("<Q", log, 0)[0]
    for i in range(count):
        if struct.unpack_from("<QQ", log, 64 + 16 * i) != record(i):
            sys.exit(f"record {i} of {count} counted is not whole")
    sys.exit(0)

for i in range(int(sys.argv[3])):
    struct.pack_into("<QQ", log, 64 + 16 * i, *record(i))
    if sys.argv[4:] != ["unsynced-record"]:
        os.fdatasync(fd)
    struct.pack_into("<Q", log, 0, i + 1)
    os.fsync(fd)
