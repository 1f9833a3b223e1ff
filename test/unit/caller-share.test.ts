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

/**
 * A call of caller `c` that holds its slot until `release`; `abandoned` is what it would be asked
 * for if it had to wait.
 */
function holding(
  share: CallerShare,
  abandoned?: () => AbortSignal,
): { running: Promise<string>; release: () => void } {
  let release = () => {};
  const running = share.run(
    'c',
    'endUser',
    'payment',
    () =>
      new Promise<string>((resolve) => {
        release = () => resolve('answered');
      }),
    abandoned,
  );
  return { running, release };
}

/** A further call of caller `c` is refused at once: its queue is full. */
async function refused(share: CallerShare): Promise<void> {
  await expect(share.run('c', 'endUser', 'payment', async () => {})).rejects.toMatchObject({
    extensions: { code: 'UPSTREAM_UNAVAILABLE' },
  });
}

/** A call of caller `c` that notes its `name` in `ran` when it runs. */
const noting = (share: CallerShare, ran: string[], name: string, abandoned?: () => AbortSignal) =>
  share.run(
    'c',
    'endUser',
    'payment',
    async () => {
      ran.push(name);
    },
    abandoned,
  );

describe('CallerShare', () => {
  it("holds each caller to its class's limit, and forgets idle callers", async () => {
    const share = new CallerShare({ endUser: 2, service: 5 }, 100);
    expect(await most(share, 'endUser', 20)).toBe(2);
    expect(await most(share, 'service', 20)).toBe(5);
    expect(share.callers).toBe(0);
  });

  it('refuses at once past the queue bound', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 1);
    const first = holding(share);
    const second = share.run('c', 'endUser', 'payment', async () => {});
    await refused(share);
    first.release();
    await Promise.all([first.running, second]);
  });

  it('drops a waiting call once its requests have gone, and runs the next one in its place', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 2);
    const ran: string[] = [];
    const first = holding(share);
    const gone = new AbortController();
    const dropped = noting(share, ran, 'dropped', () => gone.signal);
    const kept = noting(share, ran, 'kept');
    // The queue is full (2) until the abandoned call leaves it.
    await refused(share);
    const reason = new DOMException('gone', 'AbortError');
    gone.abort(reason);
    await expect(dropped).rejects.toBe(reason);
    const third = noting(share, ran, 'third');
    first.release();
    await Promise.all([first.running, kept, third]);
    expect(ran).toEqual(['kept', 'third']);
    expect(share.callers).toBe(0);
  });

  it('never asks whether a call is abandoned when it need not wait, and never drops a running one', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 1);
    const gone = new AbortController();
    let asked = 0;
    const first = holding(share, () => {
      asked += 1;
      return gone.signal;
    });
    gone.abort();
    first.release();
    await expect(first.running).resolves.toBe('answered');
    expect(asked).toBe(0);
    // Already abandoned when it would wait: refused at once, never run.
    const ran: string[] = [];
    const second = holding(share);
    await expect(noting(share, ran, 'late', () => gone.signal)).rejects.toBeInstanceOf(
      DOMException,
    );
    second.release();
    await second.running;
    expect(ran).toEqual([]);
    expect(share.callers).toBe(0);
  });
});
