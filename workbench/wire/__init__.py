"""The contract shared by the daemon and its clients: models, statuses, error codes, ids.

Imports nothing else of `workbench`: the daemon (`core`), the clients (`client`) and the command
line (`cli`) all build on it.
"""
