// Citations: the entity ids or names the answer mentions become links to their node in the
// graph view (`#node:<node id>`).

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SAFE = /^[\w.:-]{3,64}$/;

/** `mentions` maps what may appear in the text (an id, a caption) to the node it cites. */
export function linkEntities(text: string, mentions: Map<string, string>): string {
  const usable = [...mentions.keys()].filter((m) => SAFE.test(m) && SAFE.test(mentions.get(m) ?? '')).sort((a, b) => b.length - a.length);
  if (usable.length === 0) return text;
  const re = new RegExp(`(?<![\\w\\-\\[#:/])(${usable.map(escapeRegExp).join('|')})(?![\\w\\-\\]])`, 'g');
  return text
    .split(/(```[\s\S]*?```|`[^`\n]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(re, (m) => `[${m}](#node:${mentions.get(m)})`)))
    .join('');
}

// ---------------------------------------------------------------- the answer's sources

/** One entry of the `completed` event's `sources` (crates/kg-summary citations.rs):
 * an id the answer mentions that the turn's evidence holds, and the name it goes by. */
export interface Source {
  reference: string;
  label: string;
}

/** A source, resolved to what opens it: a node of the graph view, or a document (and
 * the chunk, when the answer cites one) on the Documents page. */
export type Citation =
  | { kind: 'entity'; reference: string; label: string; nodeId?: string }
  | { kind: 'document'; reference: string; label: string; document: string; chunk?: string };

const MAX_REFERENCE = 200;
const MAX_LABEL = 120;
// Control characters (and bidi overrides) have no place in an id or a name on screen.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `sources` as the service sends it; anything else (not a list, entries without a
 * usable `reference`) is left out, duplicates once. Never throws. */
export function parseSources(v: unknown): Source[] {
  if (!Array.isArray(v)) return [];
  const out: Source[] = [];
  for (const item of v) {
    if (typeof item !== 'object' || item === null) continue;
    const o = item as Record<string, unknown>;
    const reference = typeof o.reference === 'string' ? o.reference.replace(CONTROL, '').trim() : '';
    if (!reference || reference.length > MAX_REFERENCE || out.some((s) => s.reference === reference)) continue;
    const raw = typeof o.label === 'string' ? o.label.replace(CONTROL, '').trim() : '';
    const label = raw ? (raw.length > MAX_LABEL ? `${raw.slice(0, MAX_LABEL - 1)}…` : raw) : reference;
    out.push({ reference, label });
  }
  return out;
}

/** A node of the graph view as the citations need it. */
export interface CitableNode {
  id: string;
  caption: string;
  properties?: Record<string, unknown>;
}

/** The node a reference names: graph nodes carry the database's element id as `id`, the
 * entity's own id as the property `id` and its name as `caption`; matched in that order. */
export function nodeFor(reference: string, nodes: readonly CitableNode[]): string | undefined {
  return (
    nodes.find((n) => n.id === reference)?.id ??
    nodes.find((n) => n.properties?.id === reference)?.id ??
    nodes.find((n) => n.caption === reference)?.id
  );
}

/** Chunk ids are `<document id>#<position>` (kg-retrieval documents.rs). */
const CHUNK = /^(.+)#(\d+)$/;

/**
 * Resolves each source: a node of the turn's graph (see nodeFor) is an entity;
 * a chunk id, or a known document id, is a document; anything else is an entity the graph
 * view has not drawn yet (the view looks it up). A document is left out when one of its
 * chunks is cited too: the chunk says more.
 */
export function resolveCitations(
  sources: Source[],
  nodes: readonly CitableNode[],
  documents: ReadonlySet<string>,
): Citation[] {
  const chunked = new Set(sources.map((s) => CHUNK.exec(s.reference)?.[1]).filter((d): d is string => d !== undefined));
  const out: Citation[] = [];
  for (const { reference, label } of sources) {
    const node = nodeFor(reference, nodes);
    const chunk = CHUNK.exec(reference);
    if (node !== undefined) out.push({ kind: 'entity', reference, label, nodeId: node });
    else if (chunk) out.push({ kind: 'document', reference, label, document: chunk[1], chunk: reference });
    else if (documents.has(reference) || chunked.has(reference)) {
      if (!chunked.has(reference)) out.push({ kind: 'document', reference, label, document: reference });
    } else out.push({ kind: 'entity', reference, label });
  }
  return out;
}
