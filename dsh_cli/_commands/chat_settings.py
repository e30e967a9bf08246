"""``dsh chat`` flags for the model settings (they go into the request header)."""

from __future__ import annotations

import argparse

from dsh_agent import ModelSettings


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """``--temperature``, ``--top-p``, ``--max-tokens``, ``--reasoning-effort``, ``--stop``."""
    group = parser.add_argument_group("model settings (unset: the provider's default)")
    group.add_argument("--temperature", type=float, metavar="T", help="sampling temperature")
    group.add_argument("--top-p", type=float, metavar="P", help="nucleus sampling, 0 to 1")
    group.add_argument("--max-tokens", type=int, metavar="N", help="output token limit")
    group.add_argument("--reasoning-effort", metavar="EFFORT", help="e.g. low, medium or high")
    group.add_argument(
        "--stop", action="append", metavar="TEXT", help="a stop sequence (repeatable)"
    )


def model_settings(args: argparse.Namespace) -> ModelSettings:
    """The loop's ``model_settings`` the flags give."""
    return ModelSettings(
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        reasoning_effort=args.reasoning_effort,
        stop=None if args.stop is None else tuple(args.stop),
    )


__all__ = [
    "add_settings_arguments",
    "model_settings",
]
