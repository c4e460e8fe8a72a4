"""What the programs here that keep a record in versions share: version i of the record, 256 bytes that end
in their CRC-32, a directory's sync, and pmlab/trace.h's operation marks, found in the runtime pmlab preloads into a program it
traces (calls that do nothing where the program runs alone)."""
import ctypes
import os
import sys
import zlib


def version(i):
    body = (b"version %d " % i).ljust(252, b"v")
    return body + zlib.crc32(body).to_bytes(4, "little")


def held(record):
    """The version `record` is whole, or None."""
    return next((i for i in range(1000) if record == version(i)), None)


def operation_marks():
    """pmlab_op_begin and pmlab_op_end."""
    try:
        runtime = ctypes.CDLL(None)
        return runtime.pmlab_trace_op_begin, runtime.pmlab_trace_op_end
    except AttributeError:
        return (lambda: None), (lambda: None)


def returned_there(path_of):
    """The count of operations that had returned (PMLAB_CRASH_OPS_DONE); exits 1 unless the file at path_of(i)
    is there for each i of them."""
    done = int(os.environ.get("PMLAB_CRASH_OPS_DONE", "0"))
    for i in range(1, done + 1):
        if not os.path.exists(path_of(i)):
            sys.exit(f"{os.path.basename(path_of(i))} is not there, but its operation had returned")
    return done


def write_new(path, i):
    """Writes version i to a new file at `path` (there must be none) and syncs it with os.fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, version(i))
    os.fsync(fd)
    os.close(fd)


def sync_directory(path):
    """Makes the entries of the directory at `path` durable (fsync on the directory)."""
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def opened(path, mode):
    """The record's file, open to read and write; in `mode` init, version 0 written there and synced, and the
    program's exit."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    if mode == "init":
        os.pwrite(fd, version(0), 0)
        os.fsync(fd)
        sys.exit(0)
    return fd
