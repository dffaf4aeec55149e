"""The `kernforge` command: one module per command group, `main` the entry point."""

from agents.cli.main import main

__all__ = ["main"]
