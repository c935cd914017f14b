"""Processes of a service's own that work on what strangers sent (pages, uploads): forked by
multiprocessing's fork server (children.py), their limits held by the kernel (limits.py), the
pipe to them (pipes.py), and the fork server's frozen modules (fork_server_freeze.py). Two
runners are built on them: the worker's extraction processes (pages batched per message, one
child first) and the budgeted processes of any call (adapters/budgeted_processes.py)."""
