"""Edit, branches and regenerate in the web chat: an edited prompt runs on a fork the
page switches to, the switcher goes back to the first branch with both intact, and a
regenerated answer replaces the last one under a new id."""

from __future__ import annotations

from .agents import FILLER
from .browser import Chat, history, ids_and_texts


def test_edit_an_earlier_message_then_switch_back_to_the_first_branch(chat: Chat) -> None:
    chat.open()
    first = chat.new_session()
    chat.send("alpha")
    chat.settled(answers=1)
    chat.send("beta")
    before = chat.settled(answers=2)

    chat.page.click(f".msg[data-id='{before[2].id}'] .edit")  # the prompt "beta"
    chat.page.fill(".edit-text", "gamma")
    chat.page.click(".save-edit")
    fork = chat.until(lambda: chat.session_id().replace(first, ""), "the fork")
    edited = chat.settled(answers=2)
    assert [r.text for r in edited] == [  # (on failure: which session, which rows)
        "alpha",
        f"You said: alpha. {FILLER}",
        "gamma",
        f"You said: alpha | gamma. {FILLER}",
    ], (first, fork, chat.session_id(), before, edited)
    assert [r.id for r in edited[:2]] == [r.id for r in before[:2]]  # the shared prefix
    assert edited[2].id != before[2].id and edited[3].id != before[3].id
    assert chat.page.inner_text(f".msg[data-id='{edited[2].id}'] .branch-at") == "2/2"
    stored = [(m["role"], m["id"], m["content"][0]["text"]) for m in history(chat, fork)]
    assert ids_and_texts(edited) == stored

    chat.page.click(f".msg[data-id='{edited[2].id}'] .branch-prev")
    chat.until(lambda: chat.session_id() == first, "the first branch")
    back = chat.settled(answers=2)
    assert ids_and_texts(back) == ids_and_texts(before)
    assert chat.page.inner_text(f".msg[data-id='{before[2].id}'] .branch-at") == "1/2"

    chat.page.click(f".msg[data-id='{before[2].id}'] .branch-next")
    chat.until(lambda: chat.session_id() == fork, "the fork again")
    assert ids_and_texts(chat.settled(answers=2)) == ids_and_texts(edited)


def test_regenerate_replaces_the_last_answer_under_a_new_id(chat: Chat) -> None:
    chat.open()
    sid = chat.new_session()
    chat.send("again")
    before = chat.settled(answers=1)
    chat.page.click(".regenerate")
    chat.wait(lambda rows: rows[-1].id != before[1].id, "the regenerated answer")
    after = chat.settled()
    assert len(after) == 2
    assert (after[0].id, after[0].text) == (before[0].id, "again")
    assert after[1].text == before[1].text == f"You said: again. {FILLER}"
    assert [m["id"] for m in history(chat, sid)] == [r.id for r in after]
