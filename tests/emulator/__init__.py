"""A local, stateful stand-in for the platform's HTTP API (see README.md)."""

from .app import create_app
from .world.records import Settings

__all__ = ["Settings", "create_app"]
