import { describe, expect, it } from 'vitest';
import { endOfStream, initialTurn, reduce, reportCounts, type TurnState } from './reducer';
import { SseParser } from './sse';

function run(events: [string, unknown][], from: TurnState = initialTurn()): TurnState {
  return events.reduce((s, [e, d], i) => reduce(s, e, typeof d === 'string' ? d : JSON.stringify(d), i * 10), from);
}

describe('reduce', () => {
  it('keeps the sources the completed event cites, and drops malformed ones', () => {
    const s = run([
      ['content', { content: 'ACME (SUP-001) per po-policy#0' }],
      ['completed', { answer: 'ACME (SUP-001) per po-policy#0', sources: [{ reference: 'SUP-001', label: 'ACME' }, { reference: 'po-policy#0', label: 'po-policy#0' }, { nope: 1 }] }],
      ['done', {}],
    ]);
    expect(s.sources).toEqual([
      { reference: 'SUP-001', label: 'ACME' },
      { reference: 'po-policy#0', label: 'po-policy#0' },
    ]);
    expect(run([['completed', { answer: 'a', sources: 'SUP-001' }]]).sources).toEqual([]);
    expect(run([['completed', { answer: 'a', citations: [{ reference: 'X-1' }] }]]).sources).toEqual([{ reference: 'X-1', label: 'X-1' }]);
  });

  it('builds a question turn: steps, tools, graph, streamed text, done', () => {
    const s = run([
      ['conversation_id', { id: 'c1', type: 'conversation_id' }],
      ['thinking', { node: 'route', display_name: 'Understanding the question', details: '' }],
      ['route', { intent: 'query', confidence: 0.9, method: 'rule', reason: 'r' }],
      ['thinking', { node: 'react', display_name: 'Querying the graph' }],
      ['tool_call', { step: 1, id: 't1', tool: 'search_instances', arguments: { search_term: 'acme' } }],
      ['graph_data', { nodes: [{ id: 'SUP-001', labels: ['Supplier'], caption: 'ACME' }], edges: [] }],
      ['tool_result', { step: 1, id: 't1', tool: 'search_instances', success: true, summary: '1 match' }],
      ['graph_data', { nodes: [{ id: 'PO-1', labels: ['PurchaseOrder'], caption: 'PO-1' }], edges: [{ id: 'e1', type: 'FROM', source: 'PO-1', target: 'SUP-001' }] }],
      ['content_start', {}],
      ['content', { content: 'ACME is ' }],
      ['content', { content: '**SUP-001**.' }],
      ['done', {}],
    ]);
    expect(s.conversationId).toBe('c1');
    expect(s.status).toBe('done');
    expect(s.text).toBe('ACME is **SUP-001**.');
    expect(s.route?.intent).toBe('query');
    expect(s.steps.map((x) => [x.kind, x.title, x.status])).toEqual([
      ['thinking', 'Understanding the question', 'ok'],
      ['route', 'query', 'ok'],
      ['thinking', 'Querying the graph', 'ok'],
      ['tool', 'search_instances', 'ok'],
    ]);
    expect(s.steps[3].summary).toBe('1 match');
    expect(s.steps[3].arguments).toEqual({ search_term: 'acme' });
    expect(s.graph?.nodes.map((n) => n.id)).toEqual(['SUP-001', 'PO-1']);
    expect(s.graph?.edges).toHaveLength(1);
    expect(s.warnings).toEqual([]);
  });

  it('tracks an action plan, approval, progress, failures and the report', () => {
    const plan = { entity_type: 'PurchaseOrder', action_name: 'makePayment', target_count: 3, targets: [{ entity_id: 'A' }, { entity_id: 'B' }, { entity_id: 'C' }], parameters: {} };
    let s = run([
      ['action_plan', { plan }],
      ['approval_required', { approval_token: 'tok', reason: 'batch of 3', plan }],
      ['done', {}],
    ]);
    expect(s.plan?.target_count).toBe(3);
    expect(s.approval).toEqual({ token: 'tok', reason: 'batch of 3' });
    expect(s.progress).toEqual({ completed: 0, total: 3, succeeded: 0, failed: 0, unknown: 0 });
    s = run([
      ['action_plan', { plan }],
      ['action_progress', { completed: 1, total: 3, entity_id: 'A', success: true }],
      ['action_progress', { completed: 2, total: 3, entity_id: 'B', success: false }],
      ['action_error', { entity_id: 'B', success: false, error: 'Insufficient funds', reason: 'precondition_failed' }],
      ['action_progress', { completed: 3, total: 3, entity_id: 'C', success: true }],
    ]);
    expect(s.progress).toEqual({ completed: 3, total: 3, succeeded: 2, failed: 1, unknown: 0 });
    expect(s.failures).toEqual([{ entity_id: 'B', reason: 'precondition_failed', error: 'Insufficient funds' }]);
    s = reduce(s, 'action_complete', JSON.stringify({ results: { total: 3, succeeded: 2, failed: 1, successes: [{}, {}], failures: [{}] } }), 99);
    expect(s.report).toBeDefined();
    expect(s.progress).toEqual({ completed: 3, total: 3, succeeded: 2, failed: 1, unknown: 0 });
  });

  it('counts an unknown outcome apart from the failures', () => {
    const plan = { entity_type: 'PurchaseOrder', action_name: 'makePayment', target_count: 2, targets: [], parameters: {} };
    let s = run([
      ['action_plan', { plan }],
      ['action_progress', { completed: 1, total: 2, entity_id: 'A', success: false }],
      ['action_error', { entity_id: 'A', success: false, error: 'outcome unknown: …', reason: 'unknown' }],
      ['action_progress', { completed: 2, total: 2, entity_id: 'B', success: false }],
      ['action_error', { entity_id: 'B', success: false, error: 'not sent', reason: 'not_attempted' }],
    ]);
    expect(s.progress).toEqual({ completed: 2, total: 2, succeeded: 0, failed: 1, unknown: 1 });
    s = reduce(s, 'action_complete', JSON.stringify({ results: { total: 2, succeeded: 0, failed: 1, unknown: 1, successes: [], failures: [{}, {}] } }), 99);
    expect(s.progress).toEqual({ completed: 2, total: 2, succeeded: 0, failed: 1, unknown: 1 });
  });

  it('takes the whole answer from completed, so missed deltas are recovered', () => {
    const s = run([
      ['content_start', {}],
      ['content', { content: 'Paid 10 ' }],
      ['completed', { answer: 'Paid 10 orders; 14 failed.', status: 'answered' }],
      ['done', {}],
    ]);
    expect(s.text).toBe('Paid 10 orders; 14 failed.');
    expect(s.warnings).toEqual([]);
    const empty = run([['content', { content: 'kept' }], ['completed', { answer: '' }], ['done', {}]]);
    expect(empty.text).toBe('kept');
  });

  it('discards the text shown so far when content_start resets', () => {
    const s = run([
      ['content_start', {}],
      ['content', { content: 'Let me check. ' }],
      ['thinking', { node: 'agent', display_name: 'Reasoning (step 1)', details: 'Let me check. ' }],
      ['content_start', { reset: true }],
      ['content', { content: 'ACME.' }],
    ]);
    expect(s.text).toBe('ACME.');
    const kept = run([['content_start', {}], ['content', { content: 'a' }], ['content_start', {}], ['content', { content: 'b' }]]);
    expect(kept.text).toBe('ab');
  });

  it('keeps going past malformed and unknown events', () => {
    const s = run([
      ['content', '{not json'],
      ['content', '"a string"'],
      ['graph_data', { nodes: 'x' }],
      ['surprise', { a: 1 }],
      ['tool_result', { id: 'never-called', tool: 'x', success: false, summary: 'boom' }],
      ['content', { content: 42 }],
      ['content', { content: 'still here' }],
      ['done', {}],
    ]);
    expect(s.status).toBe('done');
    expect(s.text).toBe('42still here');
    expect(s.warnings).toEqual(['malformed content event', 'malformed content event', 'malformed graph_data event', 'unknown event: surprise']);
    expect(s.steps[0]).toMatchObject({ kind: 'tool', status: 'failed', summary: 'boom' });
  });

  it('marks a stream that ends without done as incomplete, and a stopped one as stopped', () => {
    const s = run([
      ['thinking', { display_name: 'Working' }],
      ['tool_call', { id: 't', tool: 'x', arguments: {} }],
      ['content', { content: 'half' }],
    ]);
    const eof = endOfStream(s, 'eof', 100);
    expect(eof.status).toBe('incomplete');
    expect(eof.steps.every((x) => x.status === 'failed')).toBe(true);
    expect(endOfStream(s, 'stopped', 100).status).toBe('stopped');
    // After done, the end of the stream changes nothing.
    const done = reduce(s, 'done', '{}', 50);
    expect(endOfStream(done, 'eof', 100)).toBe(done);
  });

  it('an error event then done ends the turn in error', () => {
    const s = run([
      ['error', { code: 'llm_unavailable', message: 'down' }],
      ['done', {}],
    ]);
    expect(s.status).toBe('error');
    expect(s.error).toEqual({ code: 'llm_unavailable', message: 'down' });
  });

  it('counts reports by their lists', () => {
    expect(reportCounts({ total: 5, succeeded: 3, failed: 2, successes: [1, 2, 3], failures: [1, 2] })).toEqual({ completed: 5, total: 5, succeeded: 3, failed: 2, unknown: 0 });
    expect(reportCounts({ total: 500, succeeded: 400, failed: 100, successes: [], failures: [] })).toEqual({ completed: 500, total: 500, succeeded: 400, failed: 100, unknown: 0 });
    expect(reportCounts({ successes: [1], failures: [1, 2] })).toEqual({ completed: 3, total: 3, succeeded: 1, failed: 2, unknown: 0 });
    expect(reportCounts(null)).toBeUndefined();
  });
});

describe('SseParser', () => {
  it('parses events split anywhere, comments, CRLF, multi-line data and ids', () => {
    const text = ': kg-agent\r\n\r\nevent: content\r\ndata: {"content":"a"}\r\n\r\nid: 7\nevent: done\ndata: {}\n\n: heartbeat\n\ndata: x\ndata: y\n\nevent: tail\ndata: no blank line';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(got).toEqual([
        { event: 'content', data: '{"content":"a"}' },
        { event: 'done', data: '{}', id: '7' },
        { event: 'message', data: 'x\ny', id: '7' },
      ]);
      expect(p.lastEventId).toBe('7');
    }
  });
});

