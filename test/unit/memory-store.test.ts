/**
 * The in-process versioned store: records kept as the objects themselves, frozen as they are
 * stored when asked (development and tests), kept as they are otherwise (production); bounded
 * in entries and in their estimated bytes either way.
 */
import { describe, expect, it } from 'vitest';
import { MemoryVersionedStore, type Versioned } from '../../src/state/records.ts';

interface Entry extends Versioned {
  value: { name: string; card: { last4: string }; levels: Array<{ slug: string }> };
}

function entry(name: string, fetchedAt = 1): Entry {
  return { fetchedAt, value: { name, card: { last4: '4242' }, levels: [{ slug: 'tier_1' }] } };
}

describe('MemoryVersionedStore', () => {
  it('freezes a stored value and everything in it by default: a write to it throws', () => {
    const store = new MemoryVersionedStore<Entry>({ maxEntries: 10, maxBytes: 1 << 20 });
    const stored = entry('Amaka');
    expect(store.writeIfNewer('k', stored, 60_000)).toBe('written');
    const held = store.get('k');
    expect(held).toBe(stored);
    for (const part of [
      held,
      held?.value,
      held?.value.card,
      held?.value.levels,
      held?.value.levels[0],
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => {
      (held as Entry).value.card.last4 = '0000';
    }).toThrow(TypeError);
    expect(() => {
      (held as Entry).value.levels.push({ slug: 'tier_9' });
    }).toThrow(TypeError);
  });

  it('without freeze keeps the value as it is, and still bounds the estimated bytes', () => {
    // Each entry is estimated at a few hundred bytes: 2,000 bytes hold a handful, not all 50.
    const store = new MemoryVersionedStore<Entry>({
      maxEntries: 1000,
      maxBytes: 2000,
      freeze: false,
    });
    for (let i = 0; i < 50; i += 1) store.writeIfNewer(`k${i}`, entry(`user ${i}`), 60_000);
    const held = store.get('k49');
    expect(held?.value.name).toBe('user 49');
    expect(Object.isFrozen(held)).toBe(false);
    expect(Object.isFrozen(held?.value.card)).toBe(false);
    const kept = Array.from({ length: 50 }, (_, i) => store.get(`k${i}`)).filter(Boolean).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(20);
    // The oldest went first.
    expect(store.get('k0')).toBeUndefined();
  });

  it('a value of a long string counts its length: one too large for the bound is not kept', () => {
    const store = new MemoryVersionedStore<Entry>({
      maxEntries: 10,
      maxBytes: 4096,
      freeze: false,
    });
    expect(store.writeIfNewer('big', entry('x'.repeat(10_000)), 60_000)).toBe('written');
    expect(store.get('big')).toBeUndefined();
    store.writeIfNewer('small', entry('y'), 60_000);
    expect(store.get('small')?.value.name).toBe('y');
  });
});
