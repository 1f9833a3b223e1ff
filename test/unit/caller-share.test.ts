import { describe, expect, it } from 'vitest';
import { type CallerKind, CallerShare } from '../../src/upstream/caller-share.ts';

/** Runs `calls` works at once for one caller of `kind`; the most that were in flight together. */
async function most(share: CallerShare, kind: CallerKind, calls: number): Promise<number> {
  let inFlight = 0;
  let peak = 0;
  const work = async () => {
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight -= 1;
  };
  await Promise.all(
    Array.from({ length: calls }, () => share.run(`${kind}-caller`, kind, 'payment', work)),
  );
  return peak;
}

describe('CallerShare', () => {
  it("holds each caller to its class's limit, and forgets idle callers", async () => {
    const share = new CallerShare({ endUser: 2, service: 5 }, 100);
    expect(await most(share, 'endUser', 20)).toBe(2);
    expect(await most(share, 'service', 20)).toBe(5);
    expect(share.callers).toBe(0);
  });

  it('refuses at once past the queue bound', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 1);
    let release = () => {};
    const first = share.run(
      'c',
      'endUser',
      'payment',
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    const second = share.run('c', 'endUser', 'payment', async () => {});
    await expect(share.run('c', 'endUser', 'payment', async () => {})).rejects.toMatchObject({
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
    release();
    await Promise.all([first, second]);
  });
});
