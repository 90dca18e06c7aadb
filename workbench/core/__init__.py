"""The daemon's inside: settings, journal, capture, executor, runner, recovery, exits, images,
service; `store/` holds the store interface and its engines. The HTTP face (`api`) sits on top.
"""
