"""The tokens every backend indexes: the ASCII fast path cuts exactly what the
expression does, whatever the text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dsh_session._search.text import terms_of, tokens

ASCII = st.text(st.characters(max_codepoint=127))
MIXED = st.text(st.characters(max_codepoint=0x3000))


@given(st.one_of(ASCII, MIXED))
def test_terms_are_the_tokens_joined_by_one_space(text: str) -> None:
    assert terms_of(text) == " ".join(tokens(text))


def test_punctuation_underscores_and_case_separate_and_fold_alike() -> None:
    text = 'Grep {"q": "snake_case"} -> 3 Matches\tin\x1ffile.py'
    assert terms_of(text) == "grep q snake case 3 matches in file py"
    assert terms_of("Größe_Ω") == "größe ω"
