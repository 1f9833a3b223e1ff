import { describe, expect, it } from 'vitest';
import { UnderWay } from '../../src/http/under-way.ts';

describe('UnderWay', () => {
  it('walks its items oldest first, without those taken out', () => {
    const list = new UnderWay<{ n: number }>();
    const items = [1, 2, 3, 4].map((n) => ({ n }));
    const entries = items.map((item) => list.add(item));
    expect([...list].map(({ n }) => n)).toEqual([1, 2, 3, 4]);
    list.remove(entries[0]!);
    list.remove(entries[2]!);
    expect([...list].map(({ n }) => n)).toEqual([2, 4]);
    list.remove(entries[3]!);
    list.add({ n: 5 });
    expect([...list].map(({ n }) => n)).toEqual([2, 5]);
  });

  it('an entry taken out lets go of its item, and taking it out again changes nothing', () => {
    const list = new UnderWay<object>();
    const kept = list.add({});
    const entry = list.add({});
    list.remove(entry);
    expect(entry.item).toBeUndefined();
    list.remove(entry);
    expect([...list]).toEqual([kept.item]);
    list.remove(kept);
    expect([...list]).toEqual([]);
  });

  it('the walk goes on past the entry it is at when that entry is taken out', () => {
    const list = new UnderWay<{ n: number }>();
    const entries = [1, 2, 3].map((n) => list.add({ n }));
    const seen: number[] = [];
    for (const { n } of list) {
      seen.push(n);
      list.remove(entries[n - 1]!);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect([...list]).toEqual([]);
  });
});
