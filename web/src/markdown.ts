// Model text → sanitised HTML. Everything the model writes goes through DOMPurify; links
// open in a new tab without an opener; no images from elsewhere (the CSP forbids them too).
import { marked } from 'marked';
import DOMPurify from 'dompurify';
import { linkEntities } from './cite';

// Raw HTML in the model's Markdown is shown as text, never parsed as markup; DOMPurify
// then cleans what Markdown itself produced (e.g. `javascript:` links).
const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
marked.use({ renderer: { html: ({ text }) => escapeHtml(text) } });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && !(node.getAttribute('href') ?? '').startsWith('#')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function renderMarkdown(text: string, mentions: Map<string, string> = new Map()): string {
  const html = marked.parse(linkEntities(text, mentions), { async: false, gfm: true, breaks: false }) as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'img', 'form', 'input', 'iframe', 'svg', 'math'],
    FORBID_ATTR: ['style'],
  });
}
