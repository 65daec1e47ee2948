// Types of scripts/api-types.mjs, for src/api-schema.test.ts.
export const SOURCE: URL;
export const TARGET: URL;
/** The text docs/openapi.json generates. */
export function generate(): Promise<string>;
/** The committed src/api-schema.d.ts ('' when there is none). */
export function committed(): string;
