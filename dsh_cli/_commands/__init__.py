"""The ``dsh`` subcommands, one small module each: ``demo``, ``chat`` and ``sessions``
(``schema`` lives in :mod:`dsh_cli._main`). Each module exposes the
:class:`~dsh_cli._main.Subcommand` parts that the CLI registers in one place."""

__all__: list[str] = []
