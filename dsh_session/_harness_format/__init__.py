"""Codecs for the durable formats of the TypeScript DeepSeek Harness.

Pure functions over bytes, rows and plain JSON dicts (not dsh event models), so a store
can plug them in: the root layout (:mod:`.layout`), zstd frames (:mod:`.zstd_frames`),
packed chunk rows (:mod:`.chunk_rows`), the JSONL header line and artifacts
(:mod:`.header_line`, :mod:`.jsonl_log`), the legacy pre-identity view
(:mod:`.legacy`), whole sessions of a root (:mod:`.store_root`) and SQLite
schema 17 (:mod:`.sqlite_codec`, :mod:`.sqlite_db`).
The format itself is described in docs/harness-format.md.
"""

from dsh_session._harness_format.chunk_rows import (
    CHUNK_ROW_TYPES,
    JSONL_BOUNDS,
    SQLITE_BOUNDS,
    RowBounds,
    expand_record,
    pack_chunk_runs,
)
from dsh_session._harness_format.event_types import (
    KNOWN_SESSION_EVENT_TYPES,
    SURFACE_EVENT_TYPES,
    check_vocabulary,
)
from dsh_session._harness_format.header_line import (
    HARNESS_FORMAT_VERSION,
    header_line,
    parse_header_line,
    session_header,
    validate_header,
)
from dsh_session._harness_format.jsonl_log import (
    HarnessLog,
    TornArtifactTail,
    batch_text,
    encode_batch,
    encode_log,
    intact_records,
    read_log,
    read_plain_log,
    read_zstd_log,
)
from dsh_session._harness_format.layout import (
    NO_CWD_DIR,
    PLAIN_LOG_NAME,
    ZSTD_LOG_NAME,
    SessionFolder,
    decode_segment,
    encode_segment,
    find_session,
    list_session_folders,
    log_path,
    project_key,
)
from dsh_session._harness_format.legacy import legacy_message_id, migrate_legacy_events
from dsh_session._harness_format.sqlite_codec import (
    EventRow,
    decode_row,
    decode_source_event_seqs,
    encode_record,
    encode_source_event_seqs,
)
from dsh_session._harness_format.sqlite_db import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    StoredSession,
    append_batch,
    check_schema,
    create_database,
    delete_session,
    physical_rows,
    read_database,
    read_headers,
    read_stored_session,
)
from dsh_session._harness_format.store_root import check_placement, read_session
from dsh_session._harness_format.zstd_frames import (
    FrameRange,
    FrameScan,
    decode_frame,
    encode_frame,
    scan_frames,
)

__all__ = [
    "APPLICATION_ID",
    "CHUNK_ROW_TYPES",
    "HARNESS_FORMAT_VERSION",
    "JSONL_BOUNDS",
    "KNOWN_SESSION_EVENT_TYPES",
    "NO_CWD_DIR",
    "PLAIN_LOG_NAME",
    "SCHEMA_VERSION",
    "SQLITE_BOUNDS",
    "SURFACE_EVENT_TYPES",
    "ZSTD_LOG_NAME",
    "EventRow",
    "FrameRange",
    "FrameScan",
    "HarnessLog",
    "RowBounds",
    "SessionFolder",
    "StoredSession",
    "TornArtifactTail",
    "append_batch",
    "batch_text",
    "check_placement",
    "check_schema",
    "check_vocabulary",
    "create_database",
    "decode_frame",
    "decode_row",
    "decode_segment",
    "decode_source_event_seqs",
    "delete_session",
    "encode_batch",
    "encode_frame",
    "encode_log",
    "encode_record",
    "encode_segment",
    "encode_source_event_seqs",
    "expand_record",
    "find_session",
    "header_line",
    "intact_records",
    "legacy_message_id",
    "list_session_folders",
    "log_path",
    "migrate_legacy_events",
    "pack_chunk_runs",
    "parse_header_line",
    "physical_rows",
    "project_key",
    "read_database",
    "read_headers",
    "read_log",
    "read_plain_log",
    "read_session",
    "read_stored_session",
    "read_zstd_log",
    "scan_frames",
    "session_header",
    "validate_header",
]
