// The graph view (lazy-loaded: Cytoscape.js stays out of the main bundle). Captions and
// properties are set as data, drawn on a canvas, and shown in the side panel as text only.
import cytoscape from 'cytoscape';
import type { GraphData } from './reducer';

const PALETTE = ['#4C8EDA', '#F79767', '#57C7E3', '#F16667', '#8DCC93', '#D9C8AE', '#C990C0', '#FFC454', '#ECB5C9', '#A5ABB6'];

function colour(label: string): string {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

export interface GraphHandle {
  destroy(): void;
  select(id: string): void;
}

export function mountGraph(
  container: HTMLElement,
  data: GraphData,
  dark: boolean,
  onSelect: (id: string | undefined) => void,
): GraphHandle {
  // Cytoscape injects a <style> unless one with this id exists; the CSP forbids inline
  // styles, so style.css carries its one rule and a placeholder stops the injection.
  const sheet = '__________cytoscape_stylesheet';
  if (!document.getElementById(sheet)) {
    const placeholder = document.createElement('meta');
    placeholder.id = sheet;
    document.head.appendChild(placeholder);
  }
  const ids = new Set(data.nodes.map((n) => n.id));
  const cy = cytoscape({
    container,
    elements: [
      ...data.nodes.map((n) => ({
        data: { id: n.id, label: n.caption || n.id, colour: colour(n.labels[0] ?? '') },
      })),
      ...data.edges
        .filter((e) => ids.has(e.source) && ids.has(e.target))
        .map((e, i) => ({ data: { id: `e${i}:${e.id}`, source: e.source, target: e.target, label: e.type } })),
    ],
    style: [
      {
        selector: 'node',
        style: {
          'background-color': 'data(colour)',
          label: 'data(label)',
          'font-size': 10,
          // Labels only once zoomed in far enough to read them (large graphs stay legible).
          'min-zoomed-font-size': 7,
          color: dark ? '#e6e6e6' : '#222',
          'text-valign': 'bottom',
          'text-margin-y': 3,
          width: 22,
          height: 22,
        },
      },
      { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#ff9f1c' } },
      {
        selector: 'edge',
        style: {
          width: 1.2,
          'line-color': dark ? '#777' : '#bbb',
          'target-arrow-color': dark ? '#777' : '#bbb',
          'target-arrow-shape': 'triangle',
          'curve-style': data.edges.length > 1000 ? 'haystack' : 'bezier',
          label: data.edges.length > 300 ? '' : 'data(label)',
          'font-size': 7,
          'min-zoomed-font-size': 7,
          color: dark ? '#aaa' : '#666',
        },
      },
    ],
    layout: { name: data.nodes.length > 800 ? 'grid' : 'cose', animate: false } as cytoscape.LayoutOptions,
    hideEdgesOnViewport: data.edges.length > 1000,
    textureOnViewport: data.nodes.length > 1000,
    wheelSensitivity: 0.3,
  });
  cy.on('tap', 'node', (e) => onSelect(e.target.id()));
  cy.on('tap', (e) => {
    if (e.target === cy) onSelect(undefined);
  });
  return {
    destroy: () => cy.destroy(),
    select: (id: string) => {
      const node = cy.getElementById(id);
      if (node.empty()) return;
      cy.$(':selected').unselect();
      node.select();
      cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.2) }, { duration: 200 });
    },
  };
}
