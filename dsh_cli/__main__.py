"""``python -m dsh_cli``: the same program as the ``dsh`` command."""

from dsh_cli import main

if __name__ == "__main__":
    raise SystemExit(main())

__all__: list[str] = []
