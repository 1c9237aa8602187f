"""Where a command's output goes: a file written whole or not at all, and a progress
bar on stderr that shows only on a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import TextIO

__all__ = ["atomic_output", "Progress", "show_progress"]


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[TextIO]:
    """A text file that appears at ``path`` only when the block ends without an
    error: written to a temporary file in the same directory, then renamed over
    ``path`` (an atomic replace on one file system). On any error, ``KeyboardInterrupt``
    included, the temporary file is removed and ``path`` is left as it was.

    A symbolic link is followed: the file it names is replaced, the link kept. What is
    not a file (``/dev/null``, ``/dev/stdout``, a named pipe) is written directly, as
    the shell's ``>`` writes it: renaming a file over it would replace the device or
    the pipe itself (``/dev/null`` for every program, when run as root)."""
    import stat
    import tempfile

    from ..errors import PromptStyleError

    try:
        mode = os.stat(path).st_mode  # (links followed: what a write would reach)
    except OSError:
        mode = None  # a new file (or a folder that is not there: mkstemp says so)
    if mode is not None and stat.S_ISDIR(mode):
        raise PromptStyleError("cannot write the output: it is a directory", file=path)
    if mode is not None and not stat.S_ISREG(mode):
        try:  # (by the name given: /dev/stdout's link names a pipe, not a path)
            handle = open(path, "w", encoding="utf-8", errors="backslashreplace", newline="\n")
        except OSError as exc:
            raise PromptStyleError(f"cannot write the output: {exc.strerror}", file=path) from None
        with handle:
            yield handle
        return
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise PromptStyleError(f"cannot write the output: {exc.strerror}", file=path) from None
    try:
        with open(fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode(target))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mode(target: str) -> int:
    """The mode the file would have had if written directly: the old file's, else the umask's."""
    try:
        return os.stat(target).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def show_progress(no_progress: bool, *, to_file: bool) -> bool:
    """Whether to draw a progress bar: on a terminal (stderr), unless turned off, and
    only when the output itself is not what the terminal shows (a file, or a pipe)."""
    if no_progress or not _isatty(sys.stderr):
        return False
    return to_file or not _isatty(sys.stdout)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


class Progress:
    """A one-line progress display on stderr, redrawn at most ten times a second:
    ``label [#####.....] done/total`` (or just the count when the total is unknown)."""

    def __init__(self, label: str, total: int | None = None) -> None:
        self.label = label
        self.total = total
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int | None = None, what: str = "") -> None:
        total = self.total if total is None else total
        now = time.monotonic()
        if now - self.last < 0.1 and done != total:
            return
        self.last = now
        width = 30
        if total:
            filled = min(width, int(width * done / total))
            bar = f"[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}"
        else:
            bar = f"{done:,}"
        prefix = f"{self.label} {what:<10} " if what else f"{self.label} "
        sys.stderr.write(f"\r{prefix}{bar}")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
