"""Writing an output file so that a failure never loses the old one.

The same discipline as pmlab's C++ writer (src/pmlab/common/files.hpp): the text goes to a hidden
temporary file in the target's directory, which is fsynced and renamed over the target, then the
directory is fsynced. On any error the temporary file is removed and the target is untouched.
"""

from __future__ import annotations

import errno
import os
import stat


class WriteError(Exception):
    """The file could not be written; the message names the cause (no space, read-only, ...)."""


def _cause(exc: OSError) -> str:
    text = exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:
        return f"{text} (over the file size limit)"
    return text


def write_atomically(path: str, text: str) -> None:
    """Replace PATH with TEXT (UTF-8), all or nothing; raise WriteError."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {_cause(exc)}") from None
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise WriteError(f"cannot write {path}: it is not a regular file")
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    data = text.encode("utf-8")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {_cause(exc)}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError(f"cannot write {path}: {_cause(exc)}") from None
    # The rename is durable once the directory is; failing to sync it loses nothing already written.
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
