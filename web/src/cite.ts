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
