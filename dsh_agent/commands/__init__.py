"""The ``dsh`` subcommands, one small module each: ``demo``, ``chat`` and ``sessions``
(``schema`` lives in :mod:`dsh_agent.cli`). Each module exposes the
:class:`~dsh_agent.cli.Subcommand` parts that the CLI registers in one place."""
