"""nativeauth.aio: an AsyncClient dropped unclosed on another thread than its event loop's is freed — its native
client and its event fd — whether the loop is running, stopped (perhaps never to run again), or stops before it gets
to the release and is then closed. (The drop on the loop's own thread is in test_aio.py's test_closing.)"""
from __future__ import annotations

import asyncio
import os
import threading
from typing import List

import pytest

from emulator_protocol import Emulator
from nativeauth import _native
from nativeauth.aio import AsyncClient


def make(emulator: Emulator) -> AsyncClient:
    return AsyncClient(emulator.authority, emulator.client_id)


def live(handle: int) -> bool:
    """Whether the library still holds the client (na_client_dispatch answers NA_EINVAL for a freed one)."""
    return int(_native.lib.na_client_dispatch(handle)) >= 0


def an_eventfd(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[eventfd]"
    except OSError:
        return False


def drop_on_another_thread(holder: List[AsyncClient]) -> None:
    """Drops the only reference to the client on a new thread (its __del__ runs there)."""
    with pytest.warns(ResourceWarning, match="unclosed AsyncClient"):
        thread = threading.Thread(target=holder.clear)
        thread.start()
        thread.join()


def bound(loop: asyncio.AbstractEventLoop, emulator: Emulator) -> tuple[List[AsyncClient], int, int]:
    """A client used once on ``loop`` (its event fd in the loop), held only by the list returned."""
    client = make(emulator)
    assert loop.run_until_complete(client.info())["config"]["client_id"] == emulator.client_id
    handle, fd = client._handle, client._fd
    assert handle is not None and an_eventfd(fd)
    return [client], handle, fd


def test_dropped_while_its_loop_is_stopped(emulator: Emulator) -> None:
    """The loop is open but not running (and may never run again): the client is freed on the dropping thread, its
    event fd out of the loop first."""
    loop = asyncio.new_event_loop()
    try:
        holder, handle, fd = bound(loop, emulator)
        drop_on_another_thread(holder)
        assert not live(handle), "the native client leaked: freed only if its stopped loop ran again"
        assert not an_eventfd(fd), "its event fd leaked"
        assert not loop.remove_reader(fd), "its event fd was left in the loop"
    finally:
        loop.close()


def test_dropped_while_its_loop_runs_then_stops_and_closes(emulator: Emulator) -> None:
    """Dropped while the loop runs (the release is handed to the loop), and the loop stops before it gets to it: the
    loop being closed without running again frees the client."""
    loop = asyncio.new_event_loop()
    try:
        holder, handle, fd = bound(loop, emulator)
        failed: List[BaseException] = []

        def on_the_loop() -> None:
            try:
                drop_on_another_thread(holder)  # the loop is running (here): the release is queued on it
            except BaseException as e:  # the loop would only log it
                failed.append(e)
            loop.stop()  # ... and it stops before its next iteration, where the release waits

        loop.call_soon(on_the_loop)
        loop.run_forever()
        if failed:
            raise failed[0]
        assert live(handle), "the release was expected to wait in the stopped loop"
    finally:
        loop.close()
    assert not live(handle), "the native client leaked with the loop's discarded callback"
    assert not an_eventfd(fd), "its event fd leaked"


def test_dropped_while_its_loop_runs_on_another_thread(emulator: Emulator) -> None:
    """The loop runs on its own thread: the release is made there (the reader removed by the loop's thread)."""
    loop = asyncio.new_event_loop()
    holder, handle, fd = bound(loop, emulator)
    runner = threading.Thread(target=loop.run_forever)
    runner.start()
    try:
        drop_on_another_thread(holder)
        freed = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
        freed.result(timeout=60)  # the loop ran an iteration after the drop: the release with it
        assert not live(handle)
        assert not an_eventfd(fd)
        assert not asyncio.run_coroutine_threadsafe(_remove_reader(loop, fd), loop).result(timeout=60)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()


async def _remove_reader(loop: asyncio.AbstractEventLoop, fd: int) -> bool:
    return loop.remove_reader(fd)
