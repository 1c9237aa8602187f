"""Reading the files a task names: regular files only, bounded in size, never blocked on.

A task file, an include, a template or meta template file, a conversation, a
replies file may name anything: a FIFO (opening it for reading waits for a
writer, forever), ``/dev/zero`` (never ends), ``/dev/stdin``, a directory, a
symlink loop, a name with a NUL character. :func:`read_text` opens without
blocking, reads only a regular file, at most ``max_file_bytes`` bytes, and turns
every failure into a typed error naming the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..errors import PromptStyleError, TaskFileError, YamlLimitError
from .limits import yaml_limits

__all__ = ["read_bytes", "read_text", "read_text_file", "read_bytes_file", "open_text"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_bytes(
    path: str | Path,
    *,
    what: str = "file",
    max_bytes: int | None = None,
    error: type[PromptStyleError] = TaskFileError,
    **where: Any,
) -> bytes:
    """The bytes of the regular file ``path``.

    :param what: how messages name the file ("task file", "chat template file"...).
    :param max_bytes: the most bytes it may hold (default: ``max_file_bytes``).
    :param error: the class of the errors raised (a size over budget is a
        :class:`~prompt_style.YamlLimitError`); ``where`` their location (``key=``...).
    :raises PromptStyleError: a missing file, a directory, anything but a regular file
        (FIFO, device), a file that cannot be read, or one larger than ``max_bytes``.
    """
    limit = max_bytes if max_bytes is not None else yaml_limits().max_file_bytes
    where.setdefault("file", str(path))
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise error(f"{what} not found", **where) from None
    except IsADirectoryError:
        raise error(f"{what} is a directory", **where) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", **where) from None
    except ValueError:  # a NUL character in the name
        raise error(f"the {what}'s name holds a NUL character", **where) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{what} is a directory", **where)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} is not a regular file (a pipe, a device or a socket)", **where)
        if info.st_size > limit:
            raise _too_large(what, limit, where)
        chunks = []
        size = 0
        # Sized by the file, in pieces past that: read(n) allocates n bytes up front.
        chunk = os.read(fd, info.st_size + 1)
        while chunk:
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise _too_large(what, limit, where)
            chunk = os.read(fd, 1 << 16)
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", **where) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def open_text(
    path: str | Path,
    *,
    what: str = "file",
    error: type[PromptStyleError] = TaskFileError,
    encoding: str = "utf-8",
    **where: Any,
) -> Any:
    """``path`` opened for reading text (universal newlines), to read a line at a time: a
    regular file only, never blocked on (a FIFO, a device).

    :raises PromptStyleError: as :func:`read_bytes` (but for the size, read as it goes).
    """
    where.setdefault("file", str(path))
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise error(f"{what} not found", **where) from None
    except IsADirectoryError:
        raise error(f"{what} is a directory", **where) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", **where) from None
    except ValueError:
        raise error(f"the {what}'s name holds a NUL character", **where) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{what} is a directory", **where)
        if not stat.S_ISREG(mode):
            raise error(f"{what} is not a regular file (a pipe, a device or a socket)", **where)
        return open(fd, encoding=encoding, closefd=True)
    except BaseException:
        os.close(fd)
        raise


def _too_large(what: str, limit: int, where: dict[str, Any]) -> YamlLimitError:
    return YamlLimitError(f"the {what} is larger than {limit:,} bytes", limit="max_file_bytes", value=limit, **where)


def read_text(
    path: str | Path,
    *,
    what: str = "file",
    max_bytes: int | None = None,
    error: type[PromptStyleError] = TaskFileError,
    encoding: str = "utf-8",
    **where: Any,
) -> str:
    """The text of the regular file ``path`` (UTF-8), as :func:`read_bytes` reads it.

    :raises PromptStyleError: as :func:`read_bytes`, and for text that is not UTF-8
        (naming the line).
    """
    data = read_bytes(path, what=what, max_bytes=max_bytes, error=error, **where)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        where.setdefault("file", str(path))
        where.setdefault("line", data.count(b"\n", 0, exc.start) + 1)
        raise error(f"the {what} is not UTF-8 ({exc.reason} at byte {exc.start})", **where) from None


read_text_file = read_text
"""Public as ``prompt_style.read_text_file``: for plugins that read files a user or a
task names (a chat template, a model folder's configs)."""
read_bytes_file = read_bytes
"""Public as ``prompt_style.read_bytes_file``: :func:`read_bytes` for plugins (a
tokenizer model)."""
