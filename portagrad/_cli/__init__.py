"""Subcommands of the ``portagrad`` command, one module each (``add_parser``, ``run``)."""
