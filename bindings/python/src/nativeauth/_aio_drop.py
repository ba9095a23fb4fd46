"""How `nativeauth.aio` frees an `AsyncClient` dropped unclosed: its event fd leaves its event loop first (the reader
is the loop's), then the native client is freed — whichever thread the garbage collector drops it on, and also when
its loop never runs again.

- Dropped on the loop's thread, or with no open loop: at once.
- Dropped on another thread while the loop runs: on the loop's thread, as a callback (``call_soon_threadsafe``).
- Dropped on another thread while the loop is not running (stopped, never to run again perhaps): at once, on the
  dropping thread — removing a reader from a loop that is not running touches nothing the loop is using; should the
  loop start meanwhile, its selector no longer reports the fd, and a dispatch already taken finds the client gone
  (``na_client_dispatch`` answers NA_EINVAL for a freed handle, never a crash).
- A loop that stops before it runs the callback: the dropping thread, seeing it stopped, makes the release itself; a
  loop that stopped later runs it when it runs again, and one closed (or collected) without running again discards
  the callback — and the release, discarded with it, frees the client then.

A release is made once, whichever of these comes first.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Optional

from . import _native


def release(loop: Optional[asyncio.AbstractEventLoop], fd: int, handle: int) -> None:
    """Frees a client: its event fd leaves ``loop`` first (when the loop is still open)."""
    try:
        if loop is not None and not loop.is_closed():
            loop.remove_reader(fd)
    finally:
        _native.lib.na_client_free(handle)


class _Release:
    """A dropped client's release, made once: called (on the loop's thread, or on the dropping thread when the loop
    is not running), or — discarded uncalled with the loop's callbacks — when it is collected."""

    __slots__ = ("_loop", "_fd", "_handle", "_lock")

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, handle: int) -> None:
        self._loop = loop
        self._fd = fd
        self._handle: Optional[int] = handle
        self._lock = threading.Lock()

    def _take(self) -> Optional[int]:
        with self._lock:
            handle, self._handle = self._handle, None
        return handle

    def __call__(self) -> None:
        handle = self._take()
        if handle is not None:
            release(self._loop, self._fd, handle)

    def __del__(self) -> None:
        try:
            handle = self._take()
            if handle is not None:  # its loop closed (or went) without running it: nothing of the loop is touched
                _native.lib.na_client_free(handle)
        except Exception:  # interpreter shutdown: nothing more can be done
            pass


def drop(loop: Optional[asyncio.AbstractEventLoop], loop_thread: int, fd: int, handle: int) -> None:
    """Frees a client dropped unclosed, on whatever thread this runs (see the module's documentation)."""
    if loop is None or loop.is_closed() or threading.get_ident() == loop_thread:
        release(loop, fd, handle)
        return
    job = _Release(loop, fd, handle)
    if loop.is_running():
        try:
            loop.call_soon_threadsafe(job)
        except RuntimeError:  # closed meanwhile: made below
            pass
        else:
            if loop.is_running():
                return  # the loop runs it (or, stopping first, runs it next time, or discards it when closed)
    job()
