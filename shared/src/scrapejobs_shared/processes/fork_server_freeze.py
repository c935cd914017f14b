"""Imported last by the extraction processes' fork server, and nowhere else: it freezes the
objects the fork server has loaded (``gc.freeze``), so that its children share them.

A child forked from the fork server shares its memory until a page of it is written. Python's
garbage collector writes to every object it examines (its header's reference counts), so a
child's first full collection (in multiprocessing's own start-up, before the child runs any of
our code) copied every page holding the fork server's modules' objects: ~12 MB a child
(bench/README.md, "Frozen before the fork"). Frozen objects are never examined: they stay
shared. They are also never collected, which costs nothing here: they are the modules' own
objects, loaded once for the process's life.

Only the fork server freezes, while its ``main`` imports the modules it was asked to preload:
imported by anything else (a test importing every module), this module does nothing.
"""

import gc
import inspect
import sys


def in_fork_server() -> bool:
    """Whether multiprocessing's fork server is importing this module (its ``main`` is on the
    stack)."""
    server = sys.modules.get("multiprocessing.forkserver")
    if server is None:
        return False
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code is server.main.__code__:
            return True
        frame = frame.f_back
    return False


if in_fork_server():
    gc.freeze()
