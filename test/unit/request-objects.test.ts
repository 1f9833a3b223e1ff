import { describe, expect, it } from 'vitest';
import type { RecordSources } from '../../src/cache/sources.ts';
import { createLoaders } from '../../src/context.ts';

// Objects made once per request keep their accessors on a prototype, never as own accessors of
// an object literal: V8 gives each literal with its own getter a hidden class of its own, and
// those kept every request's objects alive through young collections (each collection then
// copied megabytes and took tens of milliseconds under load).
describe('objects made per request', () => {
  const sources: RecordSources = {
    transaction: async (txRef) => ({ txRef }) as never,
    kycUser: async () => null,
  };

  it('the loaders: getters on the prototype, each loader made when first used, then kept', async () => {
    const loaders = createLoaders(sources, [], { maxRecords: 10 });
    expect(Object.getOwnPropertyNames(loaders)).toEqual([]);
    const getter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(loaders), 'transaction');
    expect(typeof getter?.get).toBe('function');
    const first = loaders.transaction;
    expect(loaders.transaction).toBe(first);
    expect(loaders.uncachedTransaction).not.toBe(first);
    expect(await first.load('NT-A1')).toEqual({ txRef: 'NT-A1' });
  });

  it("two requests' loaders share one prototype", () => {
    const a = createLoaders(sources, [], { maxRecords: 10 });
    const b = createLoaders(sources, [], { maxRecords: 10 });
    expect(Object.getPrototypeOf(a)).toBe(Object.getPrototypeOf(b));
  });
});
