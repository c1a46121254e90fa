"""The HTTP side: one FastAPI router module per group of routes (``/v1`` in api.py and the modules named after the
world/ module whose rules they answer with, ``/oauth`` in oauth.py, the control API ``/_emulator`` in control.py),
and the traffic layer in front of them all (traffic.py: request log, faults, rate limit)."""
