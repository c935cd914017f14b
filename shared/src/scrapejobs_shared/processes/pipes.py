"""The pipe between a service and a process of its own that works on what strangers sent
(extraction processes, budgeted work): messages pickled by the C pickler, a wait for an answer
that never blocks the event loop, and a stop that always ends the process."""

from __future__ import annotations

import asyncio
import contextlib
import pickle
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess


def put(conn: Connection, value: object) -> None:
    """One message on a pipe, pickled by the C pickler (``Connection.send`` builds a
    ``ForkingPickler`` per message, copying copyreg's table each time: 6% of a busy extraction
    process's samples; nothing here needs its reducers)."""
    conn.send_bytes(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def take(conn: Connection) -> object:
    """The next message :func:`put` on the pipe."""
    return pickle.loads(conn.recv_bytes())


async def readable(conn: Connection) -> None:
    """Wait until ``conn`` has data (or is closed) without blocking the event loop."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    fd = conn.fileno()

    def answered() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, answered)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def stop(process: BaseProcess, conn: Connection) -> None:
    """Close the pipe and end the process (killed if it still runs)."""
    with contextlib.suppress(OSError):
        conn.close()
    if process.is_alive():
        process.kill()
    process.join(timeout=1.0)
