import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, chatStream, resumeStream, setKey } from './api';
import { backoff, resumable, turnIdOf } from './resume';
import type { SseMessage } from './sse';

// The page's origin, which the client's URLs start with (set before ./api loads).
vi.hoisted(() => vi.stubGlobal('location', new URL('http://kg.test/')));

const ev = (id: string | undefined, event: string, data: Record<string, unknown> = {}): SseMessage =>
  id === undefined ? { event, data: JSON.stringify(data) } : { event, data: JSON.stringify(data), id };

/** A stream that yields `messages`, then fails with `error` (or just ends). */
async function* script(messages: SseMessage[], error?: unknown): AsyncGenerator<SseMessage> {
  for (const m of messages) yield m;
  if (error !== undefined) throw error;
}

async function collect(gen: AsyncIterable<SseMessage>): Promise<{ got: string[]; error?: unknown }> {
  const got: string[] = [];
  try {
    for await (const m of gen) got.push(`${m.id ?? '-'}:${m.event}`);
  } catch (error) {
    return { got, error };
  }
  return { got };
}

const noSleep = vi.fn(async () => {});

describe('resumable', () => {
  it('reconnects after a drop with the turn id and the last event id, skipping replayed events', async () => {
    const reopen = vi.fn((_turn: string, _last: string | undefined) =>
      script([ev('2', 'thinking'), ev('4', 'content', { content: 'c' }), ev('4', 'content', { content: 'no id line' }), ev('5', 'done')]),
    );
    const reconnects: number[] = [];
    const sleeps: number[] = [];
    const out = await collect(
      resumable(new AbortController().signal, {
        open: () => script([ev('1', 'conversation_id', { id: 'c1', turn_id: 'turn-9' }), ev('2', 'thinking'), ev('3', 'content', { content: 'b' })], new TypeError('network error')),
        reopen,
        delay: (n) => n * 100,
        sleep: async (ms) => void sleeps.push(ms),
        onReconnect: (n) => reconnects.push(n),
      }),
    );
    expect(out).toEqual({ got: ['1:conversation_id', '2:thinking', '3:content', '4:content', '4:content', '5:done'] });
    expect(reopen).toHaveBeenCalledTimes(1);
    expect(reopen.mock.calls[0].slice(0, 2)).toEqual(['turn-9', '3']);
    expect(sleeps).toEqual([100]);
    expect(reconnects).toEqual([1, 0]);
  });

  it('backs off between failed attempts and gives up with the last error', async () => {
    const sleeps: number[] = [];
    const reopen = vi.fn((_turn: string, _last: string | undefined) => script([], new ApiError(0, 'network', 'down')));
    const out = await collect(
      resumable(new AbortController().signal, {
        open: () => script([ev('1', 'thinking', { turn_id: 't' })], new TypeError('network error')),
        reopen,
        attempts: 3,
        delay: (n) => backoff(n, () => 0.5),
        sleep: async (ms) => void sleeps.push(ms),
      }),
    );
    expect(out.got).toEqual(['1:thinking']);
    expect(out.error).toBeInstanceOf(ApiError);
    expect(reopen).toHaveBeenCalledTimes(3);
    expect(reopen.mock.calls.map((c) => c[1])).toEqual(['1', '1', '1']);
    expect(sleeps).toEqual([500, 1000, 2000]);
  });

  it('resumes a stream that ended without done, and stops at a refusal (the turn is gone)', async () => {
    const reopen = vi.fn(() => script([], new ApiError(404, 'not_found', 'no such turn')));
    const out = await collect(
      resumable(new AbortController().signal, {
        open: () => script([ev('7', 'thinking', { turn_id: 't' })]),
        reopen,
        sleep: noSleep,
      }),
    );
    expect(out.got).toEqual(['7:thinking']);
    expect((out.error as ApiError).status).toBe(404);
    expect(reopen).toHaveBeenCalledTimes(1);
  });

  it('without a turn id there is nothing to resume: a drop is thrown, an early end just ends', async () => {
    const reopen = vi.fn(() => script([]));
    const drop = new TypeError('network error');
    expect(await collect(resumable(new AbortController().signal, { open: () => script([ev('1', 'thinking')], drop), reopen }))).toEqual({ got: ['1:thinking'], error: drop });
    expect(await collect(resumable(new AbortController().signal, { open: () => script([ev(undefined, 'content')]), reopen }))).toEqual({ got: ['-:content'] });
    expect(reopen).not.toHaveBeenCalled();
  });

  it('a stop during the backoff ends it without another request', async () => {
    const ctl = new AbortController();
    const reopen = vi.fn(() => script([]));
    const gen = resumable(ctl.signal, {
      open: () => script([ev('1', 'thinking', { turn_id: 't' })], new TypeError('network error')),
      reopen,
      onReconnect: () => ctl.abort(),
    });
    const out = await collect(gen);
    expect((out.error as DOMException).name).toBe('AbortError');
    expect(reopen).not.toHaveBeenCalled();
  });

  it('reads turn_id only from well-formed data', () => {
    expect(turnIdOf(ev('1', 'conversation_id', { id: 'c', turn_id: 'tx' }))).toBe('tx');
    expect(turnIdOf({ event: 'x', data: '{"turn_id": 5}' })).toBeUndefined();
    expect(turnIdOf({ event: 'x', data: 'turn_id' })).toBeUndefined();
    expect(turnIdOf({ event: 'x', data: '{}' })).toBeUndefined();
  });

  it('else reads the turn from an id of the form <turn>:<seq>', () => {
    expect(turnIdOf({ event: 'x', data: '{}', id: 't1a2-b_c:17' })).toBe('t1a2-b_c');
    expect(turnIdOf({ event: 'x', data: '{"turn_id":"tz"}', id: 't1:1' })).toBe('tz');
    expect(turnIdOf({ event: 'x', data: '{}', id: '17' })).toBeUndefined();
    expect(turnIdOf({ event: 'x', data: '{}', id: 't1:x' })).toBeUndefined();
    expect(turnIdOf({ event: 'x', data: '{}', id: 'evil/../x:3' })).toBeUndefined();
    expect(turnIdOf({ event: 'x', data: '{}', id: ':3' })).toBeUndefined();
  });

  it('resumes a turn known only from its event ids', async () => {
    const reopen = vi.fn((_turn: string, _last: string | undefined) => script([ev('t9:3', 'done')]));
    const out = await collect(
      resumable(new AbortController().signal, {
        open: () => script([ev('t9:1', 'thinking'), ev('t9:2', 'content', { content: 'a' })], new TypeError('network error')),
        reopen,
        sleep: noSleep,
      }),
    );
    expect(out.got).toEqual(['t9:1:thinking', 't9:2:content', 't9:3:done']);
    expect(reopen.mock.calls[0].slice(0, 2)).toEqual(['t9', 't9:2']);
  });

  it('backs off 0.5 s doubling to 8 s, with ±20 % jitter', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map((n) => backoff(n, () => 0.5))).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(backoff(1, () => 0)).toBe(400);
    expect(backoff(1, () => 1)).toBe(600);
  });
});

describe('resuming over fetch', () => {
  afterEach(() => {
    setKey('', false);
    vi.unstubAllGlobals();
  });

  /** A body that sends `text`, then fails as a dropped connection does. */
  const droppingBody = (text: string) => {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent) return c.error(new TypeError('network error'));
        sent = true;
        c.enqueue(new TextEncoder().encode(text));
      },
    });
  };

  it('GETs /chat/stream/{turn_id} with Last-Event-ID and the credential as headers, nothing in the URL', async () => {
    setKey('kga_secret', false);
    const calls: { url: string; method?: string; headers: Record<string, string> }[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (req: Request) => {
        const url = req.url.replace(/^http:\/\/kg\.test/, '');
        calls.push({ url, method: req.method, headers: Object.fromEntries(req.headers) });
        const sse = { headers: { 'content-type': 'text/event-stream' } };
        if (url === '/chat/stream') {
          return new Response(droppingBody('id: 41\nevent: conversation_id\ndata: {"id":"c1","turn_id":"t 1/2"}\n\nid: 42\nevent: thinking\ndata: {}\n\n'), sse);
        }
        return new Response('id: 43\nevent: content\ndata: {"content":"hi"}\n\nid: 44\nevent: done\ndata: {}\n\n', sse);
      }),
    );
    const out = await collect(
      resumable(new AbortController().signal, {
        open: (signal) => chatStream({ message: 'q' }, signal),
        reopen: resumeStream,
        sleep: noSleep,
      }),
    );
    expect(out).toEqual({ got: ['41:conversation_id', '42:thinking', '43:content', '44:done'] });
    expect(calls.map((c) => [c.method, c.url])).toEqual([
      ['POST', '/chat/stream'],
      ['GET', '/chat/stream/t%201%2F2'],
    ]);
    expect(calls[1].headers['last-event-id']).toBe('42');
    expect(calls[1].headers.authorization).toBe('Bearer kga_secret');
    expect(calls[1].headers.accept).toBe('text/event-stream');
    expect(calls.every((c) => !c.url.includes('kga_secret') && !c.url.includes('42'))).toBe(true);
  });
});
