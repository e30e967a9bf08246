// The harness's side of bench/append_100k.py: the same event sequence as dsh's bench
// workload (`_turn` in bench/session.py), appended with the TypeScript harness's own
// `Session.append` to an in-memory session (no store, no observers).
//
// Run by the suite as a child process, with the harness checkout's tsconfig so that its
// packages resolve from source:
//   node TSX --tsconfig HARNESS/tsconfig.base.json bench/harness_peer/append.mts
// It answers one JSON line per command line on stdin, so the suite can interleave its
// repeats with dsh's:
//   append N   appends N events to a new session; {"events", "wall_s", "cpu_s"} of that
//              loop alone (performance.now() and process.cpuUsage(), user + system)
//   sample N   the first N events of a new session, as logged (to check the sequence)
// The first line printed is {"ready": true, "node": VERSION}.
import { createInterface } from 'node:readline'
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { Session, SessionId } from '@deepseek-ai/dsh-session'

const MODEL = { provider: 'bench', model: 'scripted' }
const PROMPT_TAIL = 'words '.repeat(30)
const RESULT_TEXT = 'match '.repeat(60)

/** One model step: four text deltas, then the assembled message citing them. */
function* modelStep(session: Session, turn: number, step: number, toolCall?: CallId): Generator<void> {
  const first = session.seq
  for (let index = 0; index < 4; index++) {
    const chunk = { type: 'text-delta', index: 0, text: `token${index} ` } as const
    session.append('assistant/chunk', { turn, step, chunk })
    yield
  }
  const content: ContentBlock[] = [{ type: 'text', text: 'token0 token1 token2 token3' }]
  if (toolCall !== undefined) {
    content.push({ type: 'tool-call', id: toolCall, name: 'grep', arguments: '{"pattern": "x"}' })
  }
  const message = createAssistantMessage({ content, source: MODEL })
  const sourceEventSeqs = Array.from({ length: session.seq - first }, (_, offset) => first + offset)
  session.append('assistant/message', { turn, step, message }, { surfaceOp: 'append', sourceEventSeqs })
  yield
}

/** One turn as the loop logs it (a tool step, then a text step), yielding after each event. */
function* turnEvents(session: Session, turn: number): Generator<void> {
  session.append('turn/start', { turn })
  yield
  session.append('step/start', { turn, step: 1 })
  yield
  const prompt = createUserMessage({
    content: [{ type: 'text', text: `question ${turn}: ${PROMPT_TAIL}` }],
    source: { kind: 'user' },
  })
  session.append('user/message', prompt, { surfaceOp: 'append' })
  yield
  if (session.requestHeader() === undefined) {
    session.append('request/header', { header: { config: MODEL }, reason: 'initial' })
    yield
  }
  const callId = CallId(`call-${turn}`)
  yield* modelStep(session, turn, 1, callId)
  const call = session.append('tool/call', { turn, step: 1, callId, name: 'grep', arguments: '{}' })
  yield
  const result = createToolResultMessage({ callId, content: [{ type: 'text', text: RESULT_TEXT }], isError: false })
  session.append('tool/result', { turn, step: 1, message: result }, { surfaceOp: 'append', sourceEventSeqs: [call.seq] })
  yield
  session.append('step/end', { turn, step: 1 })
  yield
  session.append('step/start', { turn, step: 2 })
  yield
  yield* modelStep(session, turn, 2)
  session.append('step/end', { turn, step: 2 })
  yield
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
  yield
}

/** A new session holding the first `count` events of the workload. */
function sessionWith(count: number): Session {
  const session = Session.create(SessionId('bench'))
  let appended = 0
  for (let turn = 1; appended < count; turn++) {
    for (const _ of turnEvents(session, turn)) {
      if (++appended === count) break
    }
  }
  return session
}

function timedAppend(count: number): object {
  // Start each repeat from a collected heap when node runs with --expose-gc, as the
  // Python side collects before each of its repeats (outside the timed part).
  globalThis.gc?.()
  const cpuStart = process.cpuUsage()
  const wallStart = performance.now()
  const session = sessionWith(count)
  const wall = (performance.now() - wallStart) / 1e3
  const cpu = process.cpuUsage(cpuStart)
  if (session.seq !== count) throw new Error(`appended ${session.seq} events, expected ${count}`)
  return { events: count, wall_s: wall, cpu_s: (cpu.user + cpu.system) / 1e6 }
}

console.log(JSON.stringify({ ready: true, node: process.version }))
for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.trim().split(/\s+/)
  const count = Number(argument)
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`bad command line: ${JSON.stringify(line)}`)
  if (command === 'append') console.log(JSON.stringify(timedAppend(count)))
  else if (command === 'sample') console.log(JSON.stringify(sessionWith(count).events))
  else throw new Error(`unknown command ${JSON.stringify(command)}`)
}
