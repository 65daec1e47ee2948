// Model text → sanitised HTML. Everything the model writes goes through DOMPurify; links
// open in a new tab without an opener; no images from elsewhere (the CSP forbids them too).
import { marked } from 'marked';
import DOMPurify from 'dompurify';

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false }) as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'img', 'form', 'input', 'iframe', 'svg', 'math'],
    FORBID_ATTR: ['style'],
  });
}
