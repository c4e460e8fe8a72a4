"""Records in FILE reached two ways, as a program may mix them: record i is stored through a writable shared
mapping of the file's first page and made durable with os.fsync, or (with `far`) written with os.pwrite
FAR + 4096 * i bytes into the file, past where exec mode first views a file it writes, and os.fdatasync'd.
Then the count is written with os.pwrite into the same first page and os.fdatasync'd.

`append FILE N [far] [count-first]`: with count-first the count is written and synced before the record.
`check FILE [far]` exits 1 when a counted record is not whole."""
import mmap
import os
import struct
import sys

FAR = 80 << 20

mode, path = sys.argv[1], sys.argv[2]
far = "far" in sys.argv[3:]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
if os.fstat(fd).st_size == 0:
    os.ftruncate(fd, 4096)
page = mmap.mmap(fd, 4096)


def record(i):
    return struct.pack("<QQ", i + 1, (i + 1) * 0x9E3779B97F4A7C15 % 2**64)


def read_record(i):
    if far:
        return os.pread(fd, 16, FAR + 4096 * i)
    return bytes(page[64 + 16 * i : 80 + 16 * i])


if mode == "check":
    count = struct.unpack_from("<Q", page, 0)[0]
    for i in range(count):
        if read_record(i) != record(i):
            sys.exit(f"record {i} of {count} counted is not whole")
    sys.exit(0)


def write_record(i):
    if far:
        os.pwrite(fd, record(i), FAR + 4096 * i)
        os.fdatasync(fd)
    else:
        page[64 + 16 * i : 80 + 16 * i] = record(i)
        os.fsync(fd)


def write_count(n):
    os.pwrite(fd, struct.pack("<Q", n), 0)
    os.fdatasync(fd)


for i in range(int(sys.argv[3])):
    if "count-first" in sys.argv[4:]:
        write_count(i + 1)
        write_record(i)
    else:
        write_record(i)
        write_count(i + 1)
