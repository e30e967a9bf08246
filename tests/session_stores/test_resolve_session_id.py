"""``store.resolve_session_id(given)``: the one resolver of the id prefixes a person
types (``dsh`` uses it); ``load``/``read`` keep taking exact ids only."""

from __future__ import annotations

import pytest

from dsh_session import AmbiguousSessionIdError, Session, SessionNotFoundError
from dsh_session.stores import SessionStore

from .conftest import StoreFactory
from .scenarios import complete_turn


async def _stored(store: SessionStore, *ids: str) -> None:
    for session_id in ids:
        session = Session.create(session_id)
        complete_turn(session)
        store.attach(session)
        await store.flush(session)


async def test_a_full_id_or_a_unique_prefix_names_one_session(open_store: StoreFactory) -> None:
    store = open_store()
    await _stored(store, "abc-1111", "abd-2222", "abd-3333", "user-12")

    assert await store.resolve_session_id("abc-1111") == "abc-1111"
    assert await store.resolve_session_id("abc") == "abc-1111"
    assert await store.resolve_session_id("abd-3") == "abd-3333"
    session, _ = await store.read(await store.resolve_session_id("abd-2"))
    assert session.id == "abd-2222"
    await store.close()


async def test_an_ambiguous_prefix_lists_the_candidates(open_store: StoreFactory) -> None:
    store = open_store()
    await _stored(store, "abd-2222", "abd-3333")

    with pytest.raises(AmbiguousSessionIdError) as raised:
        await store.resolve_session_id("abd")

    assert raised.value.given == "abd"
    assert raised.value.candidates == ("abd-2222", "abd-3333")
    assert "'abd' is the start of 2 session ids" in str(raised.value)
    assert "abd-2222, abd-3333" in str(raised.value)
    await store.close()


@pytest.mark.parametrize("given", ["zzz", ""])
async def test_nothing_matching_is_not_found(open_store: StoreFactory, given: str) -> None:
    store = open_store()
    await _stored(store, "abc-1111")

    with pytest.raises(SessionNotFoundError):
        await store.resolve_session_id(given)
    await store.close()


async def test_load_and_read_still_take_exact_ids_only(open_store: StoreFactory) -> None:
    """A program's own short ids must never name another session: ``user-1`` is not
    ``user-12``."""
    store = open_store()
    await _stored(store, "user-12")

    with pytest.raises(SessionNotFoundError):
        await store.read("user-1")
    with pytest.raises(SessionNotFoundError):
        await store.load("user-1")
    await store.close()
