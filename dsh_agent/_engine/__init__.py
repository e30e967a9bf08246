"""Private implementation."""

__all__: list[str] = []
