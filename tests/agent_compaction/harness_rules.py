"""The harness's compaction rules over wire JSON, restated for the tests (from
compaction invariant.ts and the pruner's shadow-price protocol): what its invariant
checker would reject in a log dsh wrote. Returns the violations, empty when none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Json = dict[str, Any]


def violations(events: Sequence[Json]) -> list[str]:
    found: list[str] = []
    open_turn: int | None = None
    bracket: Json | None = None  # the open compaction/start data, plus "summarized"
    by_seq = {event["seq"]: event for event in events}
    for event in events:
        kind, data, seq = event["type"], event.get("data", {}), event["seq"]
        where = f"seq {seq} ({kind})"
        if kind in ("turn/start", "turn/end") and bracket is not None:
            found.append(f"{where} crosses an open compaction")
        if kind == "turn/start":
            open_turn = data["turn"]
        elif kind == "turn/end":
            open_turn = None
        elif kind == "compaction/start":
            if bracket is not None:
                found.append(f"{where} while another compaction is open")
            if data["turn"] != open_turn:
                found.append(f"{where} owner {data['turn']} but open turn {open_turn}")
            bracket = {**data, "summarized": False}
        elif kind == "compaction/summary":
            if bracket is None or data["compactionId"] != bracket["compactionId"]:
                found.append(f"{where} outside its compaction")
            elif bracket["summarized"]:
                found.append(f"{where} repeated")
            else:
                bracket["summarized"] = True
            shadowed = data["shadowedSeqs"]
            span = data["shadowedRange"]
            if not shadowed or (shadowed[0], shadowed[-1]) != (span["start"], span["end"]):
                found.append(f"{where} shadowedRange is not the first and last shadowedSeqs")
        elif kind == "compaction/end":
            if bracket is None or data["compactionId"] != bracket["compactionId"]:
                found.append(f"{where} without its compaction/start")
            elif data["turn"] != bracket["turn"]:
                found.append(f"{where} owner differs from its start")
            elif "error" not in data and not bracket["summarized"]:
                found.append(f"{where} succeeds without a compaction/summary")
            bracket = None
        elif kind == "compaction/prune":
            follower = by_seq.get(seq + 1, {})
            target = data["shadowedSeqs"]
            op = follower.get("surfaceOp")
            if (
                follower.get("type") != "tool/result"
                or not isinstance(op, dict)
                or [op["start"], op["end"]] != [target[0], target[-1]]
            ):
                found.append(f"{where} is not followed by the replacement it prices")
        elif kind == "user/message" and isinstance(event.get("surfaceOp"), dict):
            source = data["source"]
            checkpoint = source.get("kind") == "plugin" and source.get("plugin") == "compact"
            if checkpoint and (
                bracket is None or source.get("compactionId") != bracket["compactionId"]
            ):
                found.append(f"{where} checkpoint outside its compaction")
    if bracket is not None:
        found.append("the log ends inside a compaction")
    return found
