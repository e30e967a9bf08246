"""The JSONL scanner's record decoder answers exactly as ``json.loads`` on bytes: the
fast lane for UTF-8 object lines must not accept or reject anything json.loads would not."""

from __future__ import annotations

import json

import pytest

from dsh_session._harness_format.jsonl_log import _loads

LINES = [
    b'{"seq": 0, "type": "turn/start", "data": {"turn": 1}}',
    '{"text": "héllo ✓"}'.encode(),
    b'{"lone": "\\ud800"}',
    b'{"raw surrogate": "\xed\xa0\x80"}',
    b'{"a": NaN}',
    b'{"a": 1} trailing',
    b'{"a": "\xff"}',
    b"{",
    '{"a": 1}'.encode("utf-16-le"),
    b'\xef\xbb\xbf{"a": 1}',
    b"[1, 2]",
    b"",
]


def _outcome(decode: object, line: bytes) -> object:
    try:
        return ("value", repr(decode(line)))  # type: ignore[operator]
    except ValueError as error:
        return ("refused", type(error).__name__)


@pytest.mark.parametrize("line", LINES)
def test_decoder_matches_json_loads(line: bytes) -> None:
    assert _outcome(_loads, line) == _outcome(json.loads, line)
