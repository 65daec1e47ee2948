// Turns the agent's stream events (DESIGN.md §3) into the state of one chat turn. Pure:
// the UI and the unit tests drive it the same way. Unknown or malformed events never
// throw; they are recorded as warnings and the turn goes on.
import type { components } from './api-schema';
import { parseSources, type Source } from './cite';

/** The events the agent sends: `ChatEvent`'s `type` in docs/openapi.json. `reduce` has a
 * case for each (a new one fails to compile until it has); any other is a warning. */
export type ChatEventType = components['schemas']['ChatEvent']['type'];

export type StepStatus = 'running' | 'ok' | 'failed';

export interface Step {
  key: string;
  kind: 'thinking' | 'route' | 'tool';
  title: string;
  detail: string;
  status: StepStatus;
  arguments?: unknown;
  summary?: string;
  startedAt: number;
  endedAt?: number;
}

export interface GraphNode {
  id: string;
  labels: string[];
  caption: string;
  properties?: Record<string, unknown>;
}
export interface GraphEdge {
  id: string;
  type: string;
  source: string;
  target: string;
}
export interface GraphData {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface Plan {
  entity_type: string;
  action_name: string;
  target_count: number;
  targets: { entity_id: string }[];
  parameters: unknown;
}

export interface Failure {
  entity_id: string;
  reason: string;
  error: string;
}

export interface Progress {
  completed: number;
  total: number;
  succeeded: number;
  /** Certainly not applied. */
  failed: number;
  /** Sent but never answered, and not settled from the action log: may have been applied (never twice). */
  unknown: number;
}

export type TurnStatus = 'streaming' | 'done' | 'error' | 'incomplete' | 'stopped';

export interface TurnState {
  conversationId?: string;
  steps: Step[];
  route?: { intent: string; confidence: number };
  text: string;
  graph?: GraphData;
  plan?: Plan;
  approval?: { token: string; reason: string };
  progress?: Progress;
  failures: Failure[];
  report?: Record<string, unknown>;
  /** What the answer cites (`completed`'s `sources`). */
  sources: Source[];
  error?: { code: string; message: string };
  warnings: string[];
  status: TurnStatus;
}

export function initialTurn(): TurnState {
  return { steps: [], text: '', failures: [], sources: [], warnings: [], status: 'streaming' };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : d);
const num = (v: unknown, d = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

function closeRunning(steps: Step[], now: number, kinds: Step['kind'][]): Step[] {
  return steps.map((s) => (s.status === 'running' && kinds.includes(s.kind) ? { ...s, status: 'ok', endedAt: now } : s));
}

export function parseGraph(v: unknown): GraphData | undefined {
  if (!isObj(v) || !Array.isArray(v.nodes)) return undefined;
  const nodes: GraphNode[] = v.nodes.filter(isObj).map((n) => ({
    id: str(n.id),
    labels: Array.isArray(n.labels) ? n.labels.map((l) => str(l)) : [],
    caption: str(n.caption, str(n.id)),
    properties: isObj(n.properties) ? n.properties : undefined,
  })).filter((n) => n.id !== '');
  const edges: GraphEdge[] = (Array.isArray(v.edges) ? v.edges : []).filter(isObj).map((e) => ({
    id: str(e.id),
    type: str(e.type),
    source: str(e.source),
    target: str(e.target),
  })).filter((e) => e.source !== '' && e.target !== '');
  return { nodes, edges };
}

/** Merges graph data by node and edge id (later events add to earlier ones). */
export function mergeGraph(a: GraphData | undefined, b: GraphData): GraphData {
  if (!a) return b;
  const nodes = new Map(a.nodes.map((n) => [n.id, n]));
  for (const n of b.nodes) nodes.set(n.id, { ...nodes.get(n.id), ...n });
  const edges = new Map(a.edges.map((e) => [e.id || `${e.source}>${e.target}`, e]));
  for (const e of b.edges) edges.set(e.id || `${e.source}>${e.target}`, e);
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

export function parsePlan(v: unknown): Plan | undefined {
  if (!isObj(v)) return undefined;
  const targets = Array.isArray(v.targets) ? v.targets.filter(isObj).map((t) => ({ entity_id: str(t.entity_id) })) : [];
  return {
    entity_type: str(v.entity_type),
    action_name: str(v.action_name),
    target_count: num(v.target_count, targets.length),
    targets,
    parameters: v.parameters ?? {},
  };
}

/** Counts of an action report (`action_complete`'s `results`, or `/chat/approve`'s `actions`). */
export function reportCounts(report: unknown): Progress | undefined {
  if (!isObj(report)) return undefined;
  // The counts when given (the lists may be cut short), else the lists' lengths.
  const count = (n: unknown, list: unknown) => (typeof n === 'number' ? num(n) : Array.isArray(list) ? list.length : 0);
  const succeeded = count(report.succeeded, report.successes);
  const failed = count(report.failed, report.failures);
  const unknown = num(report.unknown, 0);
  const total = num(report.total, succeeded + failed + unknown);
  return { completed: succeeded + failed + unknown, total, succeeded, failed, unknown };
}

export function reduce(state: TurnState, event: string, data: string, now: number): TurnState {
  let payload: unknown;
  try {
    payload = data === '' ? {} : JSON.parse(data);
  } catch {
    return { ...state, warnings: [...state.warnings, `malformed ${event} event`] };
  }
  if (!isObj(payload)) return { ...state, warnings: [...state.warnings, `malformed ${event} event`] };
  const p = payload;
  const kind = event as ChatEventType;
  switch (kind) {
    case 'conversation_id':
      return { ...state, conversationId: str(p.id) || state.conversationId };
    case 'thinking': {
      const steps = closeRunning(state.steps, now, ['thinking', 'route']);
      const title = str(p.display_name, str(p.content, str(p.node, '…')));
      return {
        ...state,
        steps: [...steps, { key: `t${steps.length}`, kind: 'thinking', title, detail: str(p.details), status: 'running', startedAt: now }],
      };
    }
    case 'route': {
      const steps = closeRunning(state.steps, now, ['thinking']);
      const intent = str(p.intent);
      return {
        ...state,
        route: { intent, confidence: num(p.confidence) },
        steps: [...steps, { key: `r${steps.length}`, kind: 'route', title: intent, detail: str(p.reason), status: 'ok', startedAt: now, endedAt: now }],
      };
    }
    case 'tool_call': {
      const id = str(p.id, `call${state.steps.length}`);
      return {
        ...state,
        steps: [...state.steps, { key: `c:${id}`, kind: 'tool', title: str(p.tool, 'tool'), detail: '', status: 'running', arguments: p.arguments, startedAt: now }],
      };
    }
    case 'tool_result': {
      const key = `c:${str(p.id)}`;
      const ok = p.success !== false;
      let found = false;
      const steps = state.steps.map((s) => {
        if (s.key !== key) return s;
        found = true;
        return { ...s, status: ok ? ('ok' as const) : ('failed' as const), summary: str(p.summary), endedAt: now };
      });
      if (!found) {
        steps.push({ key, kind: 'tool', title: str(p.tool, 'tool'), detail: '', status: ok ? 'ok' : 'failed', summary: str(p.summary), startedAt: now, endedAt: now });
      }
      return { ...state, steps };
    }
    case 'graph_data': {
      const g = parseGraph(p);
      if (!g) return { ...state, warnings: [...state.warnings, 'malformed graph_data event'] };
      return { ...state, graph: mergeGraph(state.graph, g) };
    }
    case 'action_plan': {
      const plan = parsePlan(p.plan ?? p);
      return { ...state, plan, progress: plan ? { completed: 0, total: plan.target_count, succeeded: 0, failed: 0, unknown: 0 } : state.progress };
    }
    case 'approval_required':
      return {
        ...state,
        approval: { token: str(p.approval_token), reason: str(p.reason) },
        plan: state.plan ?? parsePlan(p.plan),
      };
    case 'action_progress': {
      const prev = state.progress ?? { completed: 0, total: 0, succeeded: 0, failed: 0, unknown: 0 };
      const ok = p.success === true;
      return {
        ...state,
        progress: {
          completed: Math.max(prev.completed, num(p.completed, prev.completed + 1)),
          total: num(p.total, prev.total),
          succeeded: prev.succeeded + (ok ? 1 : 0),
          failed: prev.failed + (ok ? 0 : 1),
          unknown: prev.unknown,
        },
      };
    }
    case 'action_error':
      return {
        ...state,
        // The progress event before it counted it failed; an unknown outcome is not a failure.
        progress:
          p.reason === 'unknown' && state.progress && state.progress.failed > 0
            ? { ...state.progress, failed: state.progress.failed - 1, unknown: state.progress.unknown + 1 }
            : state.progress,
        failures: [...state.failures, { entity_id: str(p.entity_id), reason: str(p.reason), error: str(p.error, str(p.message)) }],
      };
    case 'action_complete': {
      const report = isObj(p.results) ? p.results : p;
      const counts = reportCounts(report);
      return { ...state, report, progress: counts && counts.total > 0 ? counts : state.progress };
    }
    case 'content_start': {
      const steps = closeRunning(state.steps, now, ['thinking', 'route']);
      // reset: the text shown so far was a ReAct step's preface or draft, not the answer.
      return p.reset === true ? { ...state, steps, text: '' } : { ...state, steps };
    }
    case 'content':
      return { ...state, text: state.text + str(p.content) };
    case 'trace':
      return state;
    case 'completed':
      // The whole answer, so a client that missed content deltas still shows all of it.
      return {
        ...state,
        text: typeof p.answer === 'string' && p.answer !== '' ? p.answer : state.text,
        sources: parseSources(p.sources ?? p.citations),
      };
    case 'error':
      return { ...state, error: { code: str(p.code, 'error'), message: str(p.message) } };
    case 'done':
      return {
        ...state,
        steps: closeRunning(state.steps, now, ['thinking', 'route', 'tool']),
        status: state.error ? 'error' : 'done',
      };
    default: {
      const unhandled: never = kind;
      void unhandled;
      return { ...state, warnings: [...state.warnings, `unknown event: ${event.slice(0, 40)}`] };
    }
  }
}

/** The stream ended (or was stopped) without `done`: running steps fail, the turn is marked. */
export function endOfStream(state: TurnState, how: 'eof' | 'stopped' | 'network', now: number): TurnState {
  if (state.status !== 'streaming') return state;
  const steps = state.steps.map((s) => (s.status === 'running' ? { ...s, status: 'failed' as const, endedAt: now } : s));
  return { ...state, steps, status: how === 'stopped' ? 'stopped' : 'incomplete' };
}
