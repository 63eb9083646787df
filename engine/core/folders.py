"""Exchanging two folders in one step, where the operating system can.

Linux (renameat2 with RENAME_EXCHANGE, kernel 3.15 and later, on ext4, xfs, btrfs, tmpfs and
most local file systems) and macOS (renamex_np with RENAME_SWAP, APFS and HFS+) swap two paths
atomically: a reader sees the old folder or the new one, never a mix. Elsewhere (Windows, NFS,
SMB, FAT, an old C library) `exchange` says it could not, and the caller switches another way.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h
# What a system without the call, or a file system that cannot exchange (or a mount point,
# which cannot be renamed), answers.
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EBUSY, getattr(errno, "ENOTSUP", -1)}
_UNSUPPORTED.add(getattr(errno, "EOPNOTSUPP", -1))


def _libc_call() -> tuple[Callable[..., int], Callable[[bytes, bytes], tuple[object, ...]]] | None:
    """(function, arguments maker) for this platform's exchange call, or None."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux"):
        call = getattr(libc, "renameat2", None)
        if call is None:
            return None
        call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
        call.argtypes += [ctypes.c_uint]
        return call, lambda a, b: (_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
    if sys.platform == "darwin":
        call = getattr(libc, "renamex_np", None)
        if call is None:
            return None
        call.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        return call, lambda a, b: (a, b, _RENAME_SWAP)
    return None


def exchange(first: os.PathLike[str] | str, second: os.PathLike[str] | str) -> bool:
    """Swap two existing paths atomically. True when done; False when this system or file
    system cannot (nothing changed); an OSError for any other failure (nothing changed)."""
    found = _libc_call()
    if found is None:
        return False
    call, arguments = found
    if call(*arguments(os.fsencode(first), os.fsencode(second))) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(second))
