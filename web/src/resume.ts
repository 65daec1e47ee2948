// Resuming a turn's event stream after a network drop. The agent gives every SSE event an
// `id:` of the form `<turn>:<seq>` (crates/kg-agent-core replay.rs) and may name the turn
// in an event's data (`turn_id`); `GET /chat/stream/{turn_id}` with the `Last-Event-ID`
// header replays what came after that event, then goes on live.
// A drop (the body fails, or ends before `done`) reopens the stream that way, after a
// backoff; events already seen (same id) are not handed on twice. Without a turn id there
// is nothing to resume: the drop is reported as before.
import type { SseMessage } from './sse';
import { ApiError } from './api';

export interface ResumeHooks {
  /** The first request (POST /chat/stream). */
  open: (signal: AbortSignal) => AsyncIterable<SseMessage>;
  /** The resumption (GET /chat/stream/{turn_id} with Last-Event-ID). */
  reopen: (turnId: string, lastEventId: string | undefined, signal: AbortSignal) => AsyncIterable<SseMessage>;
  /** Waits before each reconnection attempt; `attempt` counts from 1. */
  delay?: (attempt: number) => number;
  /** At most this many attempts in a row without an event in between. */
  attempts?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told before each reconnection attempt, and with 0 once events flow again. */
  onReconnect?: (attempt: number) => void;
}

/** 0.5 s, 1 s, 2 s, 4 s, then 8 s, each ± 20 % so many clients do not come back together. */
export function backoff(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 8000);
  return Math.round(base * (0.8 + 0.4 * random()));
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new DOMException('aborted', 'AbortError'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new DOMException('aborted', 'AbortError'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A turn id as the agent makes them: `t`, then letters, digits, `-` or `_`. */
const TURN = /^t[A-Za-z0-9_-]{0,63}$/;

/** The turn an event belongs to: its data's `turn_id`, else the `<turn>` of its id. */
export function turnIdOf(m: SseMessage): string | undefined {
  if (m.data.includes('turn_id')) {
    try {
      const p: unknown = JSON.parse(m.data);
      const id = typeof p === 'object' && p !== null ? (p as Record<string, unknown>).turn_id : undefined;
      if (typeof id === 'string' && id !== '' && id.length <= 200) return id;
    } catch {
      /* not JSON: the id may still say */
    }
  }
  const at = m.id?.lastIndexOf(':') ?? -1;
  const turn = at > 0 && /^\d+$/.test(m.id?.slice(at + 1) ?? '') ? m.id?.slice(0, at) : undefined;
  return turn !== undefined && TURN.test(turn) ? turn : undefined;
}

const isAbort = (e: unknown) => e instanceof DOMException && e.name === 'AbortError';
/** Worth another attempt: the network, or the service briefly unavailable. A refusal
 * (4xx: the turn is gone, or not this caller's) is final. */
const retryable = (e: unknown) => !(e instanceof ApiError) || e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504;

/** The turn's events, across drops. Throws what the last attempt threw when it gives up. */
export async function* resumable(signal: AbortSignal, hooks: ResumeHooks): AsyncGenerator<SseMessage> {
  const delay = hooks.delay ?? backoff;
  const attempts = hooks.attempts ?? 6;
  const sleep = hooks.sleep ?? abortableSleep;
  let turnId: string | undefined;
  let lastEventId: string | undefined;
  const seen = new Set<string>();
  let failures = 0;
  let stream = hooks.open(signal);
  for (;;) {
    let dropped: unknown;
    try {
      for await (const m of stream) {
        // An event without an id line carries the last id again (the SSE rules): only an
        // earlier id coming back is a replayed event.
        if (m.id !== undefined && m.id !== lastEventId) {
          if (seen.has(m.id)) continue;
          seen.add(m.id);
          lastEventId = m.id;
        }
        turnId ??= turnIdOf(m);
        if (failures > 0) {
          failures = 0;
          hooks.onReconnect?.(0);
        }
        yield m;
        if (m.event === 'done') return;
      }
      // Ended without `done`.
      if (turnId === undefined) return;
      dropped = new ApiError(0, 'network', 'the stream ended before the turn did');
    } catch (e) {
      if (isAbort(e) || signal.aborted) throw e;
      if (turnId === undefined || !retryable(e)) throw e;
      dropped = e;
    }
    failures++;
    if (failures > attempts) throw dropped;
    hooks.onReconnect?.(failures);
    await sleep(delay(failures), signal);
    stream = hooks.reopen(turnId, lastEventId, signal);
  }
}
