import { describe, expect, it } from 'vitest';
import { linkEntities, nodeFor, parseSources, resolveCitations } from './cite';

describe('linkEntities', () => {
  it('links known ids outside code, longest first, whole ids only', () => {
    const ids = new Map(['PO-1', 'PO-12', 'SUP-001'].map((x) => [x, x]));
    expect(linkEntities('Pay PO-12 and PO-1, not PO-123 or XPO-1.', ids)).toBe(
      'Pay [PO-12](#node:PO-12) and [PO-1](#node:PO-1), not PO-123 or XPO-1.',
    );
    expect(linkEntities('`SUP-001` and ```\nSUP-001\n``` but SUP-001', ids)).toBe(
      '`SUP-001` and ```\nSUP-001\n``` but [SUP-001](#node:SUP-001)',
    );
    expect(linkEntities('[SUP-001](#node:SUP-001)', ids)).toBe('[SUP-001](#node:SUP-001)');
    expect(linkEntities('no ids', new Map())).toBe('no ids');
    expect(linkEntities('see PO-7', new Map([['PO-7', '4:db:17']]))).toBe('see [PO-7](#node:4:db:17)');
    // Ids that could smuggle Markdown or HTML are not linked.
    expect(linkEntities('a<b> x', new Map([['a<b>', 'a<b>']]))).toBe('a<b> x');
    expect(linkEntities('PO-7', new Map([['PO-7', 'x)(javascript:']]))).toBe('PO-7');
  });
});

describe('parseSources', () => {
  it('keeps entries with a usable reference, once, and cleans names', () => {
    expect(
      parseSources([
        { reference: 'SUP-001', label: 'ACME Corp' },
        { reference: 'SUP-001', label: 'again' },
        { reference: ' PO-7 ' },
        { reference: '' },
        { label: 'no reference' },
        { reference: 42 },
        null,
        'SUP-002',
        { reference: 'x\u202eevil\u0000', label: `${'n'.repeat(200)}` },
        { reference: 'r'.repeat(201) },
      ]),
    ).toEqual([
      { reference: 'SUP-001', label: 'ACME Corp' },
      { reference: 'PO-7', label: 'PO-7' },
      { reference: 'xevil', label: `${'n'.repeat(119)}…` },
    ]);
    expect(parseSources(undefined)).toEqual([]);
    expect(parseSources({ reference: 'SUP-001' })).toEqual([]);
  });
});

describe('resolveCitations', () => {
  const nodes = [
    { id: '4:db:1', caption: 'ACME Industrial', properties: { id: 'SUP-001', name: 'ACME Industrial' } },
    { id: 'PO-0003', caption: 'PO-0003' },
    { id: '4:db:9', caption: 'Widget' },
  ];
  it('places graph nodes, chunks and known documents; a document gives way to its cited chunk', () => {
    const sources = [
      { reference: 'SUP-001', label: 'ACME' },
      { reference: 'PO-0003', label: 'PO-0003' },
      { reference: 'po-policy', label: 'po-policy' },
      { reference: 'po-policy#2', label: 'po-policy#2' },
      { reference: 'handbook', label: 'Handbook' },
      { reference: 'PO-9999', label: 'PO-9999' },
      { reference: 'Widget', label: 'Widget' },
    ];
    expect(resolveCitations(sources, nodes, new Set(['handbook', 'po-policy']))).toEqual([
      { kind: 'entity', reference: 'SUP-001', label: 'ACME', nodeId: '4:db:1' },
      { kind: 'entity', reference: 'PO-0003', label: 'PO-0003', nodeId: 'PO-0003' },
      { kind: 'document', reference: 'po-policy#2', label: 'po-policy#2', document: 'po-policy', chunk: 'po-policy#2' },
      { kind: 'document', reference: 'handbook', label: 'Handbook', document: 'handbook' },
      { kind: 'entity', reference: 'PO-9999', label: 'PO-9999' },
      { kind: 'entity', reference: 'Widget', label: 'Widget', nodeId: '4:db:9' },
    ]);
  });
  it('finds a node by element id, then by its own id property, then by caption', () => {
    const twin = [
      { id: 'n1', caption: 'SUP-001' },
      { id: 'n2', caption: 'ACME', properties: { id: 'SUP-001' } },
    ];
    expect(nodeFor('SUP-001', twin)).toBe('n2');
    expect(nodeFor('n1', twin)).toBe('n1');
    expect(nodeFor('ACME', twin)).toBe('n2');
    expect(nodeFor('nothing', twin)).toBeUndefined();
  });
  it('offers an id it cannot place as an entity (the graph view looks it up)', () => {
    expect(resolveCitations([{ reference: 'handbook', label: 'handbook' }], [], new Set())).toEqual([
      { kind: 'entity', reference: 'handbook', label: 'handbook' },
    ]);
    expect(resolveCitations([], nodes, new Set())).toEqual([]);
  });
});
