"""A log appended to FILE with os.write on a descriptor opened O_APPEND, each record synced with os.fdatasync:
`append FILE N [checksummed]` writes records "record i"; with checksummed, each line ends in its CRC-32.
`check FILE [checksummed]` exits 1 when a line is not a whole record; with checksummed, a line whose CRC
does not match ends the log there (a torn last record is the crash's)."""
import os
import sys
import zlib

mode, path = sys.argv[1], sys.argv[2]
checksummed = "checksummed" in sys.argv[3:]


def line(i):
    body = b"record %d" % i
    return body + (b" %08x" % zlib.crc32(body) if checksummed else b"") + b"\n"


if mode == "check":
    data = open(path, "rb").read() if os.path.exists(path) else b""
    for i, got in enumerate(data.split(b"\n")[:-1]):
        if got + b"\n" != line(i):
            if checksummed:
                break
            sys.exit(f"line {i} is {got!r}")
    sys.exit(0)

fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
for i in range(int(sys.argv[3])):
    os.write(fd, line(i))
    os.fdatasync(fd)
