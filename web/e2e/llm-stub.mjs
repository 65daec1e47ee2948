// A tiny OpenAI-compatible endpoint for the browser tests: it answers by looking at the
// request (routing, the agent's tool loop, the summariser, embeddings), so the browser can
// ask in any order. Clients that ask for `stream: true` get one JSON document, which the
// product's LLM client accepts.
import { createServer } from 'node:http';

const completion = (message) => ({
  id: `r${Date.now()}`,
  object: 'chat.completion',
  model: 'stub',
  choices: [{ index: 0, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', message: { role: 'assistant', content: null, ...message } }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const call = (name, args) => completion({ tool_calls: [{ id: `call-${name}-${Date.now()}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const say = (content) => completion({ content });

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

export function startLlmStub({ acmeOrders, reportDelayMs = 0 }) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let r = {};
      try {
        r = JSON.parse(body);
      } catch {
        /* empty */
      }
      requests.push({ url: req.url, body: r });
      const send = (status, v) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.url.endsWith('/embeddings')) {
        const input = Array.isArray(r.input) ? r.input : [r.input];
        return send(200, { object: 'list', model: 'stub', data: input.map((t, i) => ({ object: 'embedding', index: i, embedding: embed(t) })) });
      }
      if (!req.url.endsWith('/chat/completions')) return send(404, { error: { message: 'not here' } });
      const messages = Array.isArray(r.messages) ? r.messages : [];
      const system = messages.filter((m) => m.role === 'system').map((m) => String(m.content ?? '')).join('\n');
      const users = messages.filter((m) => m.role === 'user').map((m) => String(m.content ?? ''));
      const all = JSON.stringify(messages);
      const question = users.at(-1) ?? '';
      const pay = /\bpay\b|付款|支付/i.test(all);
      const policy = /\bpolicy\b/i.test(question);
      // A passage of the uploaded po-policy document the evidence holds (best hit first).
      const passage = /po-policy#\d+/.exec(all)?.[0];
      if (system.includes('You route messages')) {
        return send(200, say(JSON.stringify({ intent: pay ? 'action' : 'query', confidence: 0.9, reason: 'stub', refined_question: question, clarification: null })));
      }
      if (Array.isArray(r.tools) && r.tools.length > 0) {
        const toolTurns = messages.filter((m) => m.role === 'tool').length;
        if (policy && !pay) {
          if (toolTurns === 0) return send(200, call('search_documents', { query: 'approval finance controller large orders' }));
          return send(200, say(passage ? `Large orders need the finance controller (${passage}).` : 'No policy found.'));
        }
        if (pay) {
          if (toolTurns === 0) return send(200, call('search_instances', { search_term: 'ACME' }));
          if (toolTurns === 1) return send(200, call('propose_action_plan', { entity_type: 'PurchaseOrder', action_name: 'makePayment', entity_ids: acmeOrders }));
          return send(200, say(`I have proposed paying all ${acmeOrders.length} orders of ACME.`));
        }
        if (toolTurns === 0) return send(200, call('search_instances', { search_term: 'ACME' }));
        if (toolTurns === 1) return send(200, call('get_instance_neighbors', { instance: 'SUP-001', hops: 1 }));
        return send(200, say('ACME (SUP-001) is a supplier with 24 purchase orders.'));
      }
      // The summariser.
      if (passage) return send(200, say(`Orders above 5,000 EUR need the finance controller (see ${passage}).`));
      if (all.includes('Insufficient funds') || all.includes('succeeded')) {
        // Late on purpose: the batch's progress must reach the browser before the turn ends.
        return void setTimeout(() => send(200, say('## Payment report\n\nSome of **ACME**\'s orders were paid; the others failed:\n\n- Insufficient funds\n- Order already paid\n- Order is not approved\n- Order is cancelled\n\n<script>alert(1)</script><img src=x onerror=alert(1)>')), reportDelayMs);
      }
      return send(200, say('**ACME** (`SUP-001`) is a supplier. It has **24** purchase orders, e.g. PO-0003:\n\n| status | orders |\n|---|---|\n| approved | 12 |\n| paid | 5 |\n| draft | 4 |\n| cancelled | 3 |\n\n<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=1">'));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ origin: `http://127.0.0.1:${port}`, requests, close: () => server.close() });
    });
  });
}
