"""`python -m agents.cli` is the `kernforge` command."""

from agents.cli.main import main

main()
