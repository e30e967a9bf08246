"""Docstring argument sections (Google, NumPy, Sphinx) split from the prose."""

from __future__ import annotations

from dsh_agent._tool_schema import parse_docstring


def test_google_args_with_types_and_continuation_lines() -> None:
    parsed = parse_docstring(
        "Get the forecast.\n\nFor one city.\n\nArgs:\n    city: The city,\n"
        "        in English.\n    days (int): How many days.\n\nReturns:\n    The text.\n"
    )
    assert parsed.description == "Get the forecast.\n\nFor one city."
    assert parsed.arguments == {"city": "The city, in English.", "days": "How many days."}


def test_numpy_parameters_with_shared_descriptions() -> None:
    parsed = parse_docstring(
        "Get the forecast.\n\nParameters\n----------\ncity : str\n    The city,\n"
        "    in English.\ndays, hours : int\n    How long.\n\nReturns\n-------\nstr\n"
        "    The text.\n"
    )
    assert parsed.description == "Get the forecast."
    assert parsed.arguments == {
        "city": "The city, in English.",
        "days": "How long.",
        "hours": "How long.",
    }


def test_sphinx_params_with_an_inline_type() -> None:
    parsed = parse_docstring(
        "Get the forecast.\n\n:param city: The city,\n    in English.\n"
        ":param int days: How many days.\n:returns: the text\n"
    )
    assert parsed.description == "Get the forecast."
    assert parsed.arguments == {"city": "The city, in English.", "days": "How many days."}


def test_prose_without_sections_is_kept_whole() -> None:
    parsed = parse_docstring("Note the colon: it is prose.\nArgs are described elsewhere.")
    assert parsed.description == "Note the colon: it is prose.\nArgs are described elsewhere."
    assert parsed.arguments == {}


def test_returns_and_raises_do_not_leak_into_arguments() -> None:
    parsed = parse_docstring("Do it.\n\nRaises:\n    ValueError: when bad.\n")
    assert parsed.description == "Do it."
    assert parsed.arguments == {}
