// Resume a stored session with the TypeScript harness's own persistence, the way its
// agent loop resumes one, and append one more turn to it; used by
// tests/harness_interop to check that stores written by dsh load and resume in the
// harness.
//
// Run with the harness checkout's tsconfig, so its packages resolve from source:
//   node TSX --tsconfig HARNESS/tsconfig.base.json bench/harness_peer/load_resume.mts \
//     --backend sqlite --path DB --session ID
//   ... --backend jsonl --path ROOT --session ID [--compression zstd|none] [--pack-chunks false]
//
// What it does, all through the harness's public services on one Cordis context:
//   1. mounts the session store, the invariant registry with the session invariant
//      companion (its cross-record checks: turn/step enclosure, call/result pairing,
//      seq order) and the persistence backend (`SqliteSessionPersistence` on the
//      database, or `JsonlSessionPersistence` on the store root);
//   2. lists the store and `prepare`s the session: the backend reads and decodes the
//      stored rows, the coordinator validates the log (format version, known event
//      types, envelopes, contiguous seqs, surface transitions, request headers) and
//      builds the unpublished Session, as the agent loop's resume does;
//   3. enters and announces that Session (the invariant companion validates every
//      loaded event here; the coordinator binds the stored log and persists the
//      unpublished suffix, the `session/end-seed` marker of a resumed log);
//   4. appends one turn the harness writes without a model: a user prompt, then the
//      turn aborted by the user before any request (turn/start, step/start,
//      user/message, step/end, turn/end {aborted, user});
//   5. flushes, detaches and disposes the context, which closes the backend.
// It prints one JSON line: the events loaded, the ids of the derived messages, the
// events appended (as stored), the stored listing.
// Any refusal of the harness ends the process with status 1 and prints
// {"error": {"stage", "name", "message", "cause"}} instead.
import { parseArgs } from 'node:util'
import { Context } from '@deepseek-ai/cordis'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import InvariantRegistry from '@deepseek-ai/dsh-invariants'
import SessionStore, { deriveEventMessage, SessionId } from '@deepseek-ai/dsh-session'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import * as SessionInvariant from '@deepseek-ai/dsh-session/invariant'
import SqliteSessionPersistence from '@deepseek-ai/dsh-session-persistence-sqlite'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'

const PROMPT = 'one more question, from the harness'

const { values } = parseArgs({
  options: {
    backend: { type: 'string' },
    path: { type: 'string' },
    session: { type: 'string' },
    compression: { type: 'string', default: 'zstd' },
    'pack-chunks': { type: 'string', default: 'true' },
  },
  strict: true,
})
if ((values.backend !== 'sqlite' && values.backend !== 'jsonl')
  || values.path === undefined || values.session === undefined) {
  throw new Error('usage: --backend sqlite|jsonl --path PATH --session ID [--compression zstd|none] [--pack-chunks true|false]')
}
const backend: 'sqlite' | 'jsonl' = values.backend
const path: string = values.path
const id = SessionId(values.session)
const compression = values.compression === 'none' ? 'none' : 'zstd'
const packChunks = values['pack-chunks'] !== 'false'

let stage = 'mount'

/** Message ids of the model-visible history, in surface order. */
function messageIds(session: Session): string[] {
  const ids: string[] = []
  for (const seq of session.surface.nodes) {
    const event = session.events[seq]
    const message = event === undefined ? null : deriveEventMessage(event)
    if (message !== null) ids.push(message.id)
  }
  return ids
}

/** An event as the summary shows it: envelope and the message id it carries, if any. */
function brief(event: SessionEvent): object {
  const message = deriveEventMessage(event)
  return { seq: event.seq, type: event.type, ...(message === null ? {} : { messageId: message.id }) }
}

function describeError(error: unknown): object {
  if (!(error instanceof Error)) return { stage, name: typeof error, message: String(error) }
  const cause = error.cause instanceof Error ? `${error.cause.name}: ${error.cause.message}` : undefined
  return { stage, name: error.name, message: error.message, ...(cause === undefined ? {} : { cause }) }
}

async function main(): Promise<object> {
  const ctx = new Context()
  try {
    await ctx.plugin(SessionStore)
    await ctx.plugin(InvariantRegistry, { enabled: true })
    await ctx.plugin(SessionInvariant)
    if (backend === 'sqlite') await ctx.plugin(SqliteSessionPersistence, { path })
    else await ctx.plugin(JsonlSessionPersistence, { root: path, compression, packChunks })

    stage = 'list'
    const listed = (await ctx.sessionPersistence.list()).map(header => header.id)

    stage = 'prepare'
    const preparation = await ctx.sessionPersistence.prepare(id)
    const session = preparation.session
    const loaded = session.firstLiveSeq
    const loadedTypes: Record<string, number> = {}
    for (const event of session.events.slice(0, loaded)) {
      loadedTypes[event.type] = (loadedTypes[event.type] ?? 0) + 1
    }
    const loadedMessageIds = messageIds(session)

    stage = 'publish'
    let detach: () => void
    try {
      detach = ctx.sessions.enter(session)
      ctx.sessions.announce(session)
    } finally {
      preparation[Symbol.dispose]()
    }

    stage = 'append'
    const turn = session.events.reduce(
      (last, event) => (event.type === 'turn/start' ? Math.max(last, event.data.turn) : last), 0) + 1
    session.append('turn/start', { turn })
    session.append('step/start', { turn, step: 1 })
    const prompt = createUserMessage({ content: [{ type: 'text', text: PROMPT }], source: { kind: 'user' } })
    session.append('user/message', prompt, { surfaceOp: 'append' })
    session.append('step/end', { turn, step: 1 })
    session.append('turn/end', { turn, reason: { kind: 'aborted', reason: { kind: 'user' } } })

    stage = 'flush'
    await ctx.sessions.flush(session)
    const appended = session.events.slice(loaded).map(event => structuredClone(event))
    stage = 'close'
    detach()
    return {
      backend,
      session: id,
      listed,
      header: session.header,
      loadedEvents: loaded,
      loadedTypes,
      loadedMessageIds,
      messageIds: messageIds(session),
      appended,
      appendedBrief: appended.map(brief),
      prompt: { id: prompt.id, text: PROMPT },
      events: session.events.length,
      node: process.version,
    }
  } finally {
    await ctx.fiber.dispose()
  }
}

try {
  const summary = await main()
  console.log(JSON.stringify(summary))
} catch (error: unknown) {
  console.log(JSON.stringify({ error: describeError(error) }))
  process.exitCode = 1
}
