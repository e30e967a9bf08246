// The dsh web chat: plain JavaScript, no build step. It talks to the API next to it
// (relative URLs, so the app can be mounted under a prefix) and follows a session's
// AG-UI stream. Identity is the client's: every prompt's id is minted here (UUIDv7)
// before it is sent, and the page keys every message by its dsh id, so a retried POST,
// a reconnect, a reload or a second tab never shows a message twice. Text from the log
// enters the page with textContent only, never as HTML.
"use strict";

// --- ids --------------------------------------------------------------------------------

let lastMillis = 0;
let counter = 0;

/** A UUIDv7 (RFC 9562): 48 bits of epoch milliseconds, then a 12-bit counter that keeps
 * ids minted in the same millisecond increasing, then random bits. */
function uuid7() {
  let now = Date.now();
  if (now <= lastMillis) {
    counter += 1;
    if (counter > 0xfff) { lastMillis += 1; counter = 0; }
    now = lastMillis;
  } else {
    lastMillis = now;
    counter = 0;
  }
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  for (let i = 0; i < 6; i += 1) bytes[i] = Math.floor(now / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// --- the API ----------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function fragment() {
  return new URLSearchParams(location.hash.slice(1));
}

/** The bearer token: from the URL fragment once (#token=T), then from sessionStorage,
 * and the fragment is rewritten without it so it does not linger in the address bar. */
function takeToken() {
  const params = fragment();
  const given = params.get("token");
  if (given !== null) {
    sessionStorage.setItem("dsh-token", given);
    params.delete("token");
    history.replaceState(null, "", `${location.pathname}${location.search}#${params}`);
  }
  return sessionStorage.getItem("dsh-token");
}

const token = takeToken();

function headers(extra) {
  const all = { ...extra };
  if (token) all.Authorization = `Bearer ${token}`;
  return all;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One API call. A network failure or a 5xx is retried with the same body, which the
 * API is idempotent on (the client-minted message or delivery id); a 4xx is final. */
async function api(method, path, body, { retries = 6 } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      if (attempt >= retries) throw new ApiError(0, `network error: ${error.message}`);
      await sleep(Math.min(250 * 2 ** attempt, 4000));
      continue;
    }
    if (response.status >= 500 && attempt < retries) {
      await sleep(Math.min(250 * 2 ** attempt, 4000));
      continue;
    }
    const text = await response.text();
    const json = text ? JSON.parse(text) : null;
    if (!response.ok) {
      const message = json && json.error ? json.error.message : response.statusText;
      throw new ApiError(response.status, message);
    }
    return json;
  }
}

const sessionPath = (sid) => `api/sessions/${encodeURIComponent(sid)}`;

// --- the page's state -------------------------------------------------------------------

const $ = (id) => document.getElementById(id);

const state = {
  sessionId: null,
  /** id -> row: {id, role, el, seq, committed, text, ...}; one row per dsh message. */
  rows: new Map(),
  /** callId -> {row, el}: the tool calls shown, wherever they came from. */
  calls: new Map(),
  lastSeq: null,
  running: false,
  stream: null,
  touched: new Set(),
  family: [],
  generation: 0,
};

function problem(text) {
  const el = $("problem");
  el.textContent = text || "";
  el.hidden = !text;
}

function setStatus(text) {
  $("status").textContent = text;
}

function setRunning(running) {
  state.running = running;
  $("send").textContent = running ? "Steer" : "Send";
  $("stop").hidden = !running;
  document.body.classList.toggle("running", running);
  setStatus(running ? "answering…" : "");
  updateActions();
}

// --- rendering --------------------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label, className, onClick) {
  const node = el("button", className, label);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}

const ROLE_LABELS = { user: "you", assistant: "assistant", tool: "tool", system: "system" };

/** The row of message ``id``, made (in ``container``, at the end) if it is new. */
function rowFor(id, role, container = $("messages")) {
  let row = state.rows.get(id);
  if (row) return row;
  const node = el("article", `msg msg-${role}`);
  node.dataset.id = id;
  node.dataset.role = role;
  const head = el("header", "msg-head");
  head.append(el("span", "who", ROLE_LABELS[role] || role));
  head.append(el("code", "msg-id", id));
  head.append(el("span", "switcher"));
  head.append(el("span", "msg-actions"));
  node.append(head, el("div", "reasoning"), el("div", "text"), el("div", "calls"));
  container.append(node);
  row = { id, role, el: node, seq: null, committed: false, text: "", reasoning: "" };
  state.rows.set(id, row);
  return row;
}

function setText(row, text) {
  row.text = text;
  row.el.querySelector(".text").textContent = text;
}

function setReasoning(row, text) {
  row.reasoning = text;
  row.el.querySelector(".reasoning").textContent = text;
}

function blockText(blocks, type = "text") {
  return blocks.filter((b) => b.type === type).map((b) => b.text).join("");
}

/** A tool call of the assistant message ``row``: its name and arguments, its id on
 * demand, and (while it waits) Approve and Deny. */
function callFor(row, callId, name, args) {
  let call = state.calls.get(callId);
  if (!call || call.row !== row) { // a provider may reuse a call id in a later message
    const node = el("div", "call");
    node.dataset.callId = callId;
    node.append(el("span", "call-name", name || "tool"), el("code", "call-args", args || ""));
    node.append(el("code", "msg-id", callId), el("span", "call-state"));
    row.el.querySelector(".calls").append(node);
    call = { row, el: node };
    state.calls.set(callId, call);
  } else if (args) {
    call.el.querySelector(".call-args").textContent = args;
  }
  return call;
}

function askApproval(value) {
  const row = rowFor(value.messageId, "assistant");
  const call = callFor(row, value.toolCallId, value.toolCallName, value.arguments);
  if (call.el.classList.contains("done") || call.el.querySelector(".approval")) return;
  const box = el("span", "approval");
  box.append(el("span", "approval-note", value.reason || "needs your approval"));
  const decide = async (verb) => {
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      const body = verb === "deny" ? { reason: "denied in the web chat" } : {};
      await api("POST", `${sessionPath(state.sessionId)}/calls/${encodeURIComponent(value.toolCallId)}/${verb}`, body);
      box.replaceChildren(el("span", "approval-note", verb === "approve" ? "approved" : "denied"));
    } catch (error) {
      problem(`${verb}: ${error.message}`);
      box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  };
  box.append(button("Approve", "approve", () => decide("approve")));
  box.append(button("Deny", "deny", () => decide("deny")));
  call.el.append(box);
  setStatus("waiting for your approval");
}

function callDone(callId, content, isError) {
  const call = state.calls.get(callId);
  if (!call) return;
  call.el.classList.add("done");
  call.el.classList.toggle("error", Boolean(isError));
  const approval = call.el.querySelector(".approval");
  if (approval) approval.remove();
  call.el.querySelector(".call-state").textContent = isError ? "failed" : "done";
}

/** A message from the history API (a committed, model-visible message). */
function showStored(entry) {
  const message = entry.message;
  const result = message.content.find((b) => b.type === "tool-result");
  const role = result ? "tool" : message.role;
  const row = rowFor(message.id, role);
  row.seq = entry.seq;
  row.committed = true;
  row.source = message.source;
  row.el.classList.remove("pending", "live");
  if (result) {
    const text = blockText(result.content);
    setText(row, text);
    row.el.classList.toggle("error", Boolean(result.isError));
    row.callId = result.toolCallId;
    callDone(result.toolCallId, text, result.isError);
    return row;
  }
  setReasoning(row, blockText(message.content, "reasoning"));
  setText(row, blockText(message.content));
  for (const block of message.content) {
    if (block.type === "tool-call") callFor(row, block.id, block.name, block.arguments);
  }
  return row;
}

// --- the stream -------------------------------------------------------------------------

/** The events of an SSE body, parsed as they arrive (a fetch body, so the request can
 * carry Authorization and Last-Event-ID, which EventSource cannot set). */
async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let id = null;
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue; // a comment: keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") id = raw;
        else if (field === "data") data.push(raw);
      }
      if (data.length) yield { id, data: JSON.parse(data.join("\n")) };
    }
  }
}

/** Follow the session's stream from after ``state.lastSeq`` (a log seq), reconnecting
 * with Last-Event-ID after a drop, until another session is shown. */
async function follow(sid, generation) {
  let delay = 250;
  while (generation === state.generation) {
    const controller = new AbortController();
    state.stream = controller;
    try {
      const extra = state.lastSeq === null ? {} : { "Last-Event-ID": String(state.lastSeq) };
      const response = await fetch(`${sessionPath(sid)}/events`, {
        headers: headers(extra),
        signal: controller.signal,
        cache: "no-store",
      });
      if (!response.ok) {
        const body = await response.json().catch(() => null);
        const message = body && body.error ? body.error.message : response.statusText;
        if (response.status < 500) { problem(`the stream: ${message}`); return; }
        throw new Error(message);
      }
      setStatus(state.running ? "answering…" : "");
      delay = 250;
      for await (const event of serverSentEvents(response.body)) {
        if (generation !== state.generation) return;
        handle(event.data);
        if (event.id !== null) commitGroup(Number(event.id));
      }
    } catch (error) {
      if (generation !== state.generation) return;
      setStatus("connection lost; reconnecting…");
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 4000);
  }
}

/** The last event of a log event's group carries its seq: the messages the group
 * touched are committed at that seq. */
function commitGroup(seq) {
  state.lastSeq = seq;
  for (const id of state.touched) {
    const row = state.rows.get(id);
    if (!row) continue;
    if (row.seq === null) row.seq = seq;
    row.committed = true;
    row.el.classList.remove("live", "pending");
  }
  state.touched.clear();
  updateActions();
}

function touch(row) {
  state.touched.add(row.id);
  return row;
}

function streamRow(id, role) {
  // A message that was pending in the outbox moves into the log where it entered it.
  const row = rowFor(id, role);
  if (row.el.parentElement !== $("messages")) $("messages").append(row.el);
  return touch(row);
}

const handlers = {
  RUN_STARTED() { setRunning(true); reconcileSoon(); },
  RUN_FINISHED() { setRunning(false); reconcileSoon(); },
  RUN_ERROR(e) { setRunning(false); problem(`the turn failed: ${e.message}`); reconcileSoon(); },
  TEXT_MESSAGE_START(e) {
    // A message's text starts over at its start: a resent (committed) message
    // replaces what streamed before it instead of adding to it.
    const row = streamRow(e.messageId, e.role === "assistant" ? "assistant" : e.role);
    if (!row.committed) row.el.classList.add("live");
    setText(row, "");
  },
  TEXT_MESSAGE_CONTENT(e) {
    const row = streamRow(e.messageId, "assistant");
    setText(row, row.text + e.delta);
  },
  TEXT_MESSAGE_END(e) { streamRow(e.messageId, "assistant"); },
  REASONING_MESSAGE_START(e) { setReasoning(streamRow(parentOf(e.messageId), "assistant"), ""); },
  REASONING_MESSAGE_CONTENT(e) {
    const row = streamRow(parentOf(e.messageId), "assistant");
    setReasoning(row, row.reasoning + e.delta);
  },
  TOOL_CALL_START(e) {
    // The call runs: whatever was asked about it is decided.
    const call = callFor(streamRow(e.parentMessageId, "assistant"), e.toolCallId, e.toolCallName, "");
    const approval = call.el.querySelector(".approval");
    if (approval) approval.remove();
  },
  TOOL_CALL_ARGS(e) {
    const call = state.calls.get(e.toolCallId);
    if (call) {
      const args = call.el.querySelector(".call-args");
      args.textContent = (call.streamed ? args.textContent : "") + e.delta;
      call.streamed = true;
    }
  },
  TOOL_CALL_RESULT(e) {
    const row = streamRow(e.messageId, "tool");
    setText(row, e.content);
    row.callId = e.toolCallId;
    callDone(e.toolCallId, e.content, false);
  },
  CUSTOM(e) {
    const value = e.value || {};
    if (e.name === "dsh.approval-asked") askApproval(value);
    else if (e.name === "dsh.message-failed") dropAttempt(value.messageId);
    else if (e.name === "dsh.retry") setStatus(`retry ${value.retry} of ${value.maxRetries}: ${value.message}`);
  },
};

function parentOf(reasoningId) {
  return reasoningId.replace(/\.reasoning$/, "");
}

/** A failed model attempt: what it streamed was never committed, so it goes. */
function dropAttempt(id) {
  const row = state.rows.get(id);
  if (!row) return;
  if (row.committed) { row.el.classList.add("error"); return; }
  row.el.remove();
  state.rows.delete(id);
  state.touched.delete(id);
}

function handle(event) {
  const handler = handlers[event.type];
  if (handler) handler(event);
}

// --- history, reconciling, branches -----------------------------------------------------

let reconcileTimer = null;

/** Re-read the history soon (at a turn's start and end): a regenerated answer's
 * predecessor leaves the surface, and new branches may have appeared. */
function reconcileSoon() {
  clearTimeout(reconcileTimer);
  const generation = state.generation;
  reconcileTimer = setTimeout(() => {
    reconcile(generation).catch((error) => problem(`reading the history: ${error.message}`));
  }, 150);
}

async function reconcile(generation) {
  const history = await api("GET", `${sessionPath(state.sessionId)}/messages`);
  if (generation !== state.generation) return;
  applyHistory(history);
  await showBranches(history);
}

/** Show ``history``: its messages in its order; rows it does not hold stay only if
 * they came after it (a later seq) or are not committed yet (pending, streaming). */
function applyHistory(history) {
  const known = new Set();
  const list = $("messages");
  for (const entry of history.messages) {
    const row = showStored(entry);
    known.add(entry.message.id);
    list.append(row.el); // in history order
  }
  for (const [id, row] of [...state.rows]) {
    if (known.has(id)) continue;
    const later = row.seq !== null && row.seq >= history.seq; // history.seq: the next seq
    if (later || !row.committed) {
      if (row.el.parentElement === list) list.append(row.el);
    } else {
      row.el.remove();
      state.rows.delete(id);
    }
  }
  updateActions();
}

async function familyOf(history) {
  const histories = new Map([[history.session.id, history]]);
  const read = async (sid) => {
    if (!histories.has(sid)) histories.set(sid, await api("GET", `${sessionPath(sid)}/messages`));
    return histories.get(sid);
  };
  let root = history;
  while (root.session.parentSession) root = await read(root.session.parentSession);
  const family = [];
  const queue = [root.session.id];
  while (queue.length) {
    const sid = queue.shift();
    const member = await read(sid);
    family.push(member);
    queue.push(...member.forks);
  }
  return family;
}

/** A switcher on every message that has other versions in the session's family (the
 * root session and its forks, made by edits): "‹ 2/3 ›" goes to the branch holding
 * that version. */
async function showBranches(history) {
  const generation = state.generation;
  const lonely = !history.session.parentSession && history.forks.length === 0;
  const family = lonely ? [history] : await familyOf(history);
  if (generation !== state.generation || history.session.id !== state.sessionId) return;
  state.family = family;
  const mine = history.messages.map((m) => m.message.id);
  document.querySelectorAll(".switcher").forEach((s) => s.replaceChildren());
  mine.forEach((id, index) => {
    const versions = [];
    for (const member of family) {
      const ids = member.messages.map((m) => m.message.id);
      if (ids.length <= index || !mine.slice(0, index).every((v, i) => ids[i] === v)) continue;
      if (!versions.some((v) => v.id === ids[index])) {
        versions.push({ id: ids[index], session: ids[index] === id ? history.session.id : member.session.id });
      }
    }
    const row = state.rows.get(id);
    if (versions.length < 2 || !row) return; // (a row another session's view dropped)
    const at = versions.findIndex((v) => v.id === id);
    const switcher = row.el.querySelector(".switcher");
    const go = (step) => () => openSession(versions[(at + step + versions.length) % versions.length].session);
    switcher.append(button("‹", "branch-prev", go(-1)));
    switcher.append(el("span", "branch-at", `${at + 1}/${versions.length}`));
    switcher.append(button("›", "branch-next", go(1)));
  });
  const branch = family.findIndex((m) => m.session.id === history.session.id);
  $("branch-note").textContent = family.length > 1 ? `branch ${branch + 1} of ${family.length}` : "";
}

/** Edit on prompts, Regenerate on the last answer. */
function updateActions() {
  const rows = [...$("messages").children].map((node) => state.rows.get(node.dataset.id)).filter(Boolean);
  const lastAnswer = [...rows].reverse().find((r) => r.role === "assistant" && r.committed);
  for (const row of rows) {
    const actions = row.el.querySelector(".msg-actions");
    actions.replaceChildren();
    if (row.role === "user" && row.committed && row.source && row.source.kind === "user") {
      actions.append(button("Edit", "edit", () => startEdit(row)));
    }
    if (row === lastAnswer && rows[rows.length - 1] === row && !state.running) {
      actions.append(button("Regenerate", "regenerate", regenerate));
    }
  }
}

function startEdit(row) {
  const area = el("textarea", "edit-text");
  area.value = row.text;
  const box = el("div", "editing");
  const cancel = () => { box.remove(); row.el.classList.remove("being-edited"); };
  box.append(area, button("Save and send", "save-edit", () => saveEdit(row, area.value, box)), button("Cancel", "cancel-edit", cancel));
  row.el.classList.add("being-edited");
  row.el.append(box);
  area.focus();
}

/** Edit prompt ``row`` on a fork of the session, then show the fork: found through the
 * delivery's answer or, sooner, as a new fork holding the edit (``source.editOf``). */
async function saveEdit(row, content, box) {
  box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  const sid = state.sessionId;
  const before = new Set((await api("GET", `${sessionPath(sid)}/messages`)).forks);
  const key = uuid7();
  try {
    await api("POST", `${sessionPath(sid)}/messages/${encodeURIComponent(row.id)}/edit`, { content, delivery_id: key });
    setStatus("making a branch…");
    for (let i = 0; i < 600 && state.sessionId === sid; i += 1) {
      const delivery = await api("GET", `${sessionPath(sid)}/deliveries/${key}`);
      if (delivery.answer && delivery.answer.outcome !== "applied") throw new Error(delivery.answer.detail);
      const answered = delivery.answer && delivery.answer.detail.replace(/^fork /, "");
      const forks = (await api("GET", `${sessionPath(sid)}/messages`)).forks.filter((f) => !before.has(f));
      for (const fork of answered ? [answered] : forks) {
        const history = await api("GET", `${sessionPath(fork)}/messages`);
        if (history.messages.some((m) => (m.message.source || {}).editOf === row.id)) {
          await openSession(fork);
          return;
        }
      }
      await sleep(200);
    }
  } catch (error) {
    problem(`edit: ${error.message}`);
    box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
  }
}

async function regenerate() {
  try {
    await api("POST", `${sessionPath(state.sessionId)}/regenerate`, { delivery_id: uuid7() });
  } catch (error) {
    problem(`regenerate: ${error.message}`);
  }
}

// --- sessions ---------------------------------------------------------------------------

async function listSessions() {
  const { sessions } = await api("GET", "api/sessions");
  const roots = sessions.filter((s) => !s.parentSession).sort((a, b) => b.createdAt - a.createdAt);
  const list = $("sessions");
  list.replaceChildren();
  const rootOf = state.family.length ? state.family[0].session.id : state.sessionId;
  for (const session of roots) {
    const item = el("li");
    const open = button(new Date(session.createdAt).toLocaleString(), "session", () => openSession(session.id));
    open.append(el("code", "session-id", session.id));
    open.dataset.id = session.id;
    if (session.id === rootOf) open.classList.add("current");
    item.append(open);
    list.append(item);
  }
}

/** Show session ``sid``: its history first, then its stream from after the history's
 * seq (or from an unanswered call's message, so a waiting approval is asked again). */
async function openSession(sid) {
  state.generation += 1;
  const generation = state.generation;
  if (state.stream) state.stream.abort();
  state.sessionId = sid;
  state.rows.clear();
  state.calls.clear();
  state.touched.clear();
  state.lastSeq = null;
  $("messages").replaceChildren();
  $("outbox").replaceChildren();
  problem("");
  const params = fragment();
  params.set("session", sid);
  history.replaceState(null, "", `#${params}`);
  $("title").textContent = `session ${sid}`;
  const stored = await api("GET", `${sessionPath(sid)}/messages`);
  if (generation !== state.generation) return;
  applyHistory(stored);
  state.lastSeq = resumeSeq(stored);
  setRunning(looksRunning(stored));
  await showBranches(stored);
  await listSessions();
  follow(sid, generation);
}

/** Where the stream resumes: after the history's seq, or just before the last answer
 * when it has calls without results (their approval may be waiting). Anything resent
 * replaces what the page shows under the same id. */
function resumeSeq(stored) {
  const results = new Set();
  for (const { message } of stored.messages) {
    for (const b of message.content) if (b.type === "tool-result") results.add(b.toolCallId);
  }
  const answers = stored.messages.filter((m) => m.message.role === "assistant");
  const last = answers[answers.length - 1];
  const open = last && last.message.content.some((b) => b.type === "tool-call" && !results.has(b.id));
  // (history.seq is the seq the next event will get; -1 is not a seq: from the start)
  const after = open ? last.seq - 1 : stored.seq - 1;
  return after >= 0 ? after : null;
}

function looksRunning(stored) {
  const last = stored.messages[stored.messages.length - 1];
  if (!last) return false;
  const m = last.message;
  return !(m.role === "assistant" && !m.content.some((b) => b.type === "tool-call"));
}

async function newSession() {
  const session = await api("POST", "api/sessions", { id: uuid7() });
  await openSession(session.id);
}

// --- sending ----------------------------------------------------------------------------

/** Send the prompt: a follow-up when idle, a steer into the running turn otherwise.
 * The id is minted here and shown at once; a retry sends the same id. */
async function send(event) {
  event.preventDefault();
  const text = $("prompt").value;
  if (!text.trim()) return;
  if (!state.sessionId) await newSession();
  const id = uuid7();
  const verb = state.running ? "steer" : "messages";
  const row = rowFor(id, "user", $("outbox"));
  row.el.classList.add("pending");
  row.source = { kind: "user" };
  setText(row, text);
  $("prompt").value = "";
  try {
    await api("POST", `${sessionPath(state.sessionId)}/${verb}`, { id, content: text });
    if (!state.running) setRunning(true);
  } catch (error) {
    row.el.classList.add("error");
    problem(`not sent: ${error.message}`);
  }
}

async function stop() {
  try {
    await api("POST", `${sessionPath(state.sessionId)}/cancel`, { delivery_id: uuid7() });
  } catch (error) {
    problem(`stop: ${error.message}`);
  }
}

/** Keep the newest message in view while the person reads at the bottom. */
function followTheBottom() {
  const log = $("log");
  let atBottom = true;
  log.addEventListener("scroll", () => {
    atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  });
  new MutationObserver(() => {
    if (atBottom) log.scrollTop = log.scrollHeight;
  }).observe(log, { childList: true, subtree: true, characterData: true });
}

async function start() {
  followTheBottom();
  $("composer").addEventListener("submit", (e) => send(e).catch((error) => problem(error.message)));
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("stop").addEventListener("click", stop);
  $("new-session").addEventListener("click", () => newSession().catch((error) => problem(error.message)));
  $("show-ids").addEventListener("change", (e) => document.body.classList.toggle("show-ids", e.target.checked));
  document.body.classList.toggle("show-ids", $("show-ids").checked);
  const wanted = fragment().get("session");
  try {
    if (wanted) await openSession(wanted);
    else await listSessions();
  } catch (error) {
    problem(error.status === 401
      ? "This server needs a token: open the URL `dsh serve` printed (…/#token=…)."
      : error.message);
  }
}

start();
