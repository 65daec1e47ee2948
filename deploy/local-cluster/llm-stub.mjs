// An OpenAI-compatible endpoint for the local cluster's load runs, with a model's pace: it
// answers by looking at the request, as the browser tests' stub does (web/e2e/llm-stub.mjs:
// the router's verdict, the agent's tool loop, the summariser, embeddings), but waits
// before it answers and streams text token by token when asked to (`"stream": true`), so a
// chat turn takes about as long as one with a hosted model and its answer arrives in pieces.
//
//   node deploy/local-cluster/llm-stub.mjs --port 18090
//
// Pace (environment, milliseconds): LLM_STUB_FIRST_TOKEN_MS (300) before a reply starts,
// LLM_STUB_TOKEN_MS (15) between streamed tokens, LLM_STUB_TOKENS (40) tokens per streamed
// answer. GET /stats answers how many completions it served.
import { createServer } from 'node:http';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const port = Number(arg('--port', '18090'));
const firstTokenMs = Number(process.env.LLM_STUB_FIRST_TOKEN_MS ?? 300);
const tokenMs = Number(process.env.LLM_STUB_TOKEN_MS ?? 15);
const tokenCount = Number(process.env.LLM_STUB_TOKENS ?? 40);
const stats = { completions: 0, streamed: 0, embeddings: 0 };

const completion = (message) => ({
  id: `r${Date.now()}`,
  object: 'chat.completion',
  model: 'stub',
  choices: [{ index: 0, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', message: { role: 'assistant', content: null, ...message } }],
  usage: { prompt_tokens: 200, completion_tokens: tokenCount, total_tokens: 200 + tokenCount },
});
const call = (name, args) =>
  completion({ tool_calls: [{ id: `call-${name}-${Date.now()}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });

function embed(text) {
  const v = new Array(64).fill(0);
  for (const w of String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0;
    for (const c of w) h = (h * 31 + c.codePointAt(0)) >>> 0;
    v[h % 64] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

// An answer of `tokenCount` tokens that names the question it answers (the checker does not
// read answers, but a person reading a stored conversation can match them up).
function answerTokens(question) {
  const words = `Answer to "${question.slice(0, 60)}": ACME (SUP-001) supplies parts to several products and has 24 purchase orders, 12 of them approved.`.split(' ');
  const tokens = [];
  for (let i = 0; i < tokenCount; i++) tokens.push((i ? ' ' : '') + words[i % words.length]);
  return tokens;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    let r = {};
    try {
      r = JSON.parse(body);
    } catch {
      /* an empty or broken body: answered as an empty request */
    }
    const send = (status, v) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (req.method === 'GET' && req.url === '/stats') return send(200, stats);
    if (req.method === 'GET' && req.url.endsWith('/models')) {
      return send(200, { object: 'list', data: [{ id: 'stub', object: 'model', owned_by: 'local-cluster' }] });
    }
    if (req.url.endsWith('/embeddings')) {
      stats.embeddings++;
      const input = Array.isArray(r.input) ? r.input : [r.input];
      return send(200, { object: 'list', model: 'stub', data: input.map((t, i) => ({ object: 'embedding', index: i, embedding: embed(t) })) });
    }
    if (!req.url.endsWith('/chat/completions')) return send(404, { error: { message: 'not here' } });
    stats.completions++;
    const messages = Array.isArray(r.messages) ? r.messages : [];
    const system = messages.filter((m) => m.role === 'system').map((m) => String(m.content ?? '')).join('\n');
    const users = messages.filter((m) => m.role === 'user').map((m) => String(m.content ?? ''));
    const question = users.at(-1) ?? '';
    await sleep(firstTokenMs);
    if (system.includes('You route messages')) {
      const verdict = { intent: 'query', confidence: 0.9, reason: 'stub', refined_question: question, clarification: null };
      return send(200, completion({ content: JSON.stringify(verdict) }));
    }
    if (Array.isArray(r.tools) && r.tools.length > 0) {
      // The agent's loop: one graph tool, then the answer (streamed when asked).
      const toolTurns = messages.filter((m) => m.role === 'tool').length;
      if (toolTurns === 0) return send(200, call('search_instances', { search_term: 'ACME' }));
    }
    const tokens = answerTokens(question);
    if (!r.stream) return send(200, completion({ content: tokens.join('') }));
    stats.streamed++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta, finish) =>
      `data: ${JSON.stringify({ id: 'stub', object: 'chat.completion.chunk', model: 'stub', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (const t of tokens) {
      if (res.destroyed) return;
      res.write(chunk({ content: t }, null));
      await sleep(tokenMs);
    }
    res.write(chunk({}, 'stop'));
    res.write(`data: ${JSON.stringify({ id: 'stub', object: 'chat.completion.chunk', model: 'stub', choices: [], usage: { prompt_tokens: 200, completion_tokens: tokenCount, total_tokens: 200 + tokenCount } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
}).listen(port, '127.0.0.1', () => console.log(`llm-stub: listening on http://127.0.0.1:${port}`));
