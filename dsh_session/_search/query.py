"""The search query language, parsed once and compiled per backend.

A query is words and ``"quoted phrases"`` (each may end in ``*`` for a prefix),
combined with ``AND`` (also implied between neighbours), ``OR``, ``NOT`` and
parentheses, binding as in SQLite FTS5: ``NOT`` tightest, then ``AND``, then ``OR``.
It is FTS5's query syntax without column filters, ``NEAR`` and ``^``, so a query means
the same on every backend; anything else is refused with :class:`SearchQueryError`
naming the query and where it went wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_session._search.text import tokens
from dsh_session.errors import SearchQueryError

_LEXEME = re.compile(
    r'\s*(?:(?P<paren>[()])|"(?P<phrase>[^"]*)"(?P<pstar>\*?)|(?P<word>[^\s()"]+))'
)
_OPERATORS = frozenset({"AND", "OR", "NOT"})


@dataclass(frozen=True, slots=True)
class _Phrase:
    words: tuple[str, ...]
    prefix: bool

    def positions(self, terms: Sequence[str]) -> set[int]:
        first, last, n = self.words[0], self.words[-1], len(self.words)
        if n == 1:
            if self.prefix:
                return {i for i, term in enumerate(terms) if term.startswith(first)}
            return {i for i, term in enumerate(terms) if term == first}
        found: set[int] = set()
        for start in range(len(terms) - n + 1):
            if terms[start] != first:
                continue
            end = terms[start + n - 1]
            if all(terms[start + k] == self.words[k] for k in range(1, n - 1)) and (
                end == last or (self.prefix and end.startswith(last))
            ):
                found.update(range(start, start + n))
        return found

    def fts5(self) -> str:
        return '"' + " ".join(self.words) + '"' + ("*" if self.prefix else "")

    def tsquery(self) -> str:
        lexemes = [f"'{w}'" for w in self.words]
        if self.prefix:
            lexemes[-1] += ":*"
        return lexemes[0] if len(lexemes) == 1 else "(" + " <-> ".join(lexemes) + ")"


@dataclass(frozen=True, slots=True)
class _Both:
    """``AND`` of its parts."""

    parts: tuple[_Node, ...]

    def positions(self, terms: Sequence[str]) -> set[int]:
        found: set[int] = set()
        for part in self.parts:
            matched = part.positions(terms)
            if not matched:
                return set()
            found |= matched
        return found

    def fts5(self) -> str:
        return "(" + " AND ".join(part.fts5() for part in self.parts) + ")"

    def tsquery(self) -> str:
        return "(" + " & ".join(part.tsquery() for part in self.parts) + ")"


@dataclass(frozen=True, slots=True)
class _Either:
    """``OR`` of its parts."""

    parts: tuple[_Node, ...]

    def positions(self, terms: Sequence[str]) -> set[int]:
        return set().union(*(part.positions(terms) for part in self.parts))

    def fts5(self) -> str:
        return "(" + " OR ".join(part.fts5() for part in self.parts) + ")"

    def tsquery(self) -> str:
        return "(" + " | ".join(part.tsquery() for part in self.parts) + ")"


@dataclass(frozen=True, slots=True)
class _Without:
    """``keep NOT drop``."""

    keep: _Node
    drop: _Node

    def positions(self, terms: Sequence[str]) -> set[int]:
        if self.drop.positions(terms):
            return set()
        return self.keep.positions(terms)

    def fts5(self) -> str:
        return f"({self.keep.fts5()} NOT {self.drop.fts5()})"

    def tsquery(self) -> str:
        return f"({self.keep.tsquery()} & !{self.drop.tsquery()})"


_Node = _Phrase | _Both | _Either | _Without


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query: compile it for a backend, or match it against tokens."""

    text: str
    """The query as given."""
    _tree: _Node

    def fts5(self) -> str:
        """The query as an FTS5 ``MATCH`` expression over tokenized text."""
        return self._tree.fts5()

    def tsquery(self) -> str:
        """The query as a PostgreSQL ``to_tsquery('simple', ...)`` argument."""
        return self._tree.tsquery()

    def positions(self, terms: Sequence[str]) -> set[int]:
        """The token positions that make ``terms`` match (empty: no match)."""
        return self._tree.positions(terms)


def parse_query(text: str) -> SearchQuery:
    """Parse ``text``, or raise :class:`SearchQueryError` naming what is wrong."""
    parser = _Parser(text)
    tree = parser.parse()
    return SearchQuery(text, tree)


class _Parser:
    def __init__(self, text: str) -> None:
        self._text = text
        self._items = self._lex(text)
        """(kind, value, position): kind ``(``, ``)``, ``op`` (value: the operator) or
        ``phrase`` (value: the :class:`_Phrase`)."""
        self._at = 0

    def _fail(self, problem: str, position: int | None = None) -> SearchQueryError:
        return SearchQueryError(self._text, problem, position=position)

    def _lex(self, text: str) -> list[tuple[str, object, int]]:
        items: list[tuple[str, object, int]] = []
        at = 0
        while text[at:].strip():
            found = _LEXEME.match(text, at)
            if found is None:
                raise self._fail("a quote is not closed", text.index('"', at))
            if found["paren"]:
                items.append((found["paren"], None, found.start("paren")))
            elif found["phrase"] is not None:
                position = found.start("phrase") - 1
                words = self._words(found["phrase"], position, quoted=True)
                items.append(("phrase", _Phrase(words, bool(found["pstar"])), position))
            else:
                word: str = found["word"]
                position = found.start("word")
                stem = word.removesuffix("*")
                if "*" in stem:
                    raise self._fail("'*' may only end a word or phrase", position)
                if word in _OPERATORS:
                    items.append(("op", word, position))
                else:
                    words = self._words(stem, position, quoted=False)
                    items.append(("phrase", _Phrase(words, stem != word), position))
            at = found.end()
        return items

    def _words(self, text: str, position: int, *, quoted: bool) -> tuple[str, ...]:
        words = tuple(tokens(text))
        if not words:
            what = "the phrase" if quoted else f"{text!r}"
            raise self._fail(f"{what} holds no letters or digits to search for", position)
        return words

    def _peek(self) -> tuple[str, object, int] | None:
        return self._items[self._at] if self._at < len(self._items) else None

    def parse(self) -> _Node:
        if not self._items:
            raise self._fail("the query is empty")
        tree = self._or()
        extra = self._peek()
        if extra is not None:
            raise self._fail(f"unexpected {extra[0]!r}", extra[2])
        return tree

    def _or(self) -> _Node:
        parts = [self._and()]
        while self._is_op("OR"):
            self._at += 1
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else _Either(tuple(parts))

    def _and(self) -> _Node:
        parts = [self._not()]
        while True:
            if self._is_op("AND"):
                self._at += 1
            elif not self._starts_operand():
                break
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else _Both(tuple(parts))

    def _not(self) -> _Node:
        node = self._operand()
        while self._is_op("NOT"):
            self._at += 1
            node = _Without(node, self._operand())
        return node

    def _operand(self) -> _Node:
        item = self._peek()
        if item is None:
            raise self._fail("the query ends where a word or phrase is expected", len(self._text))
        kind, value, position = item
        self._at += 1
        if isinstance(value, _Phrase):
            return value
        if kind == "(":
            inner = self._or()
            closing = self._peek()
            if closing is None or closing[0] != ")":
                raise self._fail("a parenthesis is not closed", position)
            self._at += 1
            return inner
        raise self._fail(f"{value or kind!r} where a word or phrase is expected", position)

    def _is_op(self, name: str) -> bool:
        item = self._peek()
        return item is not None and item[0] == "op" and item[1] == name

    def _starts_operand(self) -> bool:
        item = self._peek()
        return item is not None and item[0] in ("phrase", "(")


__all__ = [
    "SearchQuery",
    "parse_query",
]
