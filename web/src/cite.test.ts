import { describe, expect, it } from 'vitest';
import { linkEntities } from './cite';

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
