"""Records nested past the JSON parser's limit are corruption errors, never
``RecursionError``, in every harness codec that parses stored JSON."""

from __future__ import annotations

import pytest

from dsh_session._harness_format import read_plain_log
from dsh_session._harness_format.sqlite_codec import EventRow, decode_row
from dsh_session.errors import HarnessCorruptError

from .fixtures import artifact

_DEEP = "[" * 100_000 + "]" * 100_000


def _plain_log_header() -> bytes:
    data = artifact("jsonl-unpacked", "plain-text").read_bytes()
    return data.split(b"\n", 1)[0] + b"\n"


def test_a_deep_header_line_is_a_corruption_error() -> None:
    with pytest.raises(HarnessCorruptError, match="too deep"):
        read_plain_log(('{"type":"session","x":' + _DEEP + "}\n").encode())


def test_a_deep_event_line_is_a_corruption_error() -> None:
    line = '{"type":"user/message","seq":0,"time":1,"data":' + _DEEP + "}\n"
    with pytest.raises(HarnessCorruptError, match="too deep"):
        read_plain_log(_plain_log_header() + line.encode())


@pytest.mark.parametrize("column", ["data", "surface_op"])
def test_a_deep_sqlite_column_is_a_corruption_error(column: str) -> None:
    columns = {"data": "{}", "surface_op": None, column: _DEEP}
    row = EventRow(
        seq=3,
        type="user/message",
        time=1,
        data=columns["data"] or "{}",
        source_event_seqs=None,
        surface_op=columns["surface_op"],
        ignorable=None,
    )
    with pytest.raises(HarnessCorruptError, match="too deep") as raised:
        decode_row(row)
    assert raised.value.seq == 3
