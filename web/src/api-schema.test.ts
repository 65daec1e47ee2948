import { describe, expect, it } from 'vitest';
import { committed, generate } from '../scripts/api-types.mjs';

describe('api-schema.d.ts', () => {
  it('is what docs/openapi.json generates (else run `npm run api:types`)', async () => {
    // Compared as a whole, not with toEqual, so a stale file fails with one short line.
    expect(committed() === (await generate()), 'src/api-schema.d.ts is stale: run `npm run api:types` in web/').toBe(true);
  }, 60_000);
});
