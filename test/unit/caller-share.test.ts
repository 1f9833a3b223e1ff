import { describe, expect, it } from 'vitest';
import {
  CALL_DROPPED,
  type CallerKind,
  CallerShare,
  SWEEP_INTERVAL_MS,
} from '../../src/upstream/caller-share.ts';

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
 * A call of caller `c` that holds its slot until `release`; `gone` is what it would be asked if
 * it had to wait.
 */
function holding(
  share: CallerShare,
  gone?: () => boolean,
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
    gone,
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
const noting = (share: CallerShare, ran: string[], name: string, gone?: () => boolean) =>
  share.run(
    'c',
    'endUser',
    'payment',
    async () => {
      ran.push(name);
    },
    gone,
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

  it('drops a waiting call its requests have left when its place is wanted, and runs the next one in its place', async () => {
    let now = 0;
    const share = new CallerShare({ endUser: 1, service: 1 }, 2, () => now);
    const ran: string[] = [];
    const first = holding(share);
    let left = false;
    let asked = 0;
    const dropped = noting(share, ran, 'dropped', () => {
      asked += 1;
      return left;
    });
    const kept = noting(share, ran, 'kept');
    // The queue is full (2): a call no request has left keeps its place.
    await refused(share);
    const askedWhileWaiting = asked;
    left = true;
    now += SWEEP_INTERVAL_MS;
    // Its requests have gone: the next call takes its place, and it is never made.
    const third = noting(share, ran, 'third');
    await expect(dropped).rejects.toBe(CALL_DROPPED);
    first.release();
    await Promise.all([first.running, kept, third]);
    expect(ran).toEqual(['kept', 'third']);
    expect(share.callers).toBe(0);
    // Asked only when it came to wait and when its place was wanted, never while it waited.
    expect(askedWhileWaiting).toBe(2);
  });

  it('looks through a full queue of wanted calls at most once per interval, however many calls it refuses', async () => {
    let now = 0;
    const share = new CallerShare({ endUser: 1, service: 1 }, 2, () => now);
    const first = holding(share);
    let asked = 0;
    const wanted = () => {
      asked += 1;
      return false;
    };
    const queued = [noting(share, [], 'a', wanted), noting(share, [], 'b', wanted)];
    expect(asked).toBe(2);
    for (let i = 0; i < 50; i++) await refused(share);
    // One look through the two waiting calls for fifty refusals.
    expect(asked).toBe(4);
    now += SWEEP_INTERVAL_MS;
    await refused(share);
    expect(asked).toBe(6);
    first.release();
    await Promise.all([first.running, ...queued]);
    expect(share.callers).toBe(0);
  });

  it('drops a waiting call its requests have left when its turn comes, and passes the slot on', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 10);
    const ran: string[] = [];
    const first = holding(share);
    let left = false;
    const dropped = noting(share, ran, 'dropped', () => left);
    const kept = noting(share, ran, 'kept', () => false);
    left = true;
    first.release();
    await expect(dropped).rejects.toBe(CALL_DROPPED);
    await Promise.all([first.running, kept]);
    expect(ran).toEqual(['kept']);
    expect(share.callers).toBe(0);
  });

  it('never asks whether a call is abandoned when it need not wait, and never drops a running one', async () => {
    const share = new CallerShare({ endUser: 1, service: 1 }, 1);
    let asked = 0;
    const first = holding(share, () => {
      asked += 1;
      return true;
    });
    first.release();
    await expect(first.running).resolves.toBe('answered');
    expect(asked).toBe(0);
    // Already abandoned when it would wait: refused at once, never run.
    const ran: string[] = [];
    const second = holding(share);
    await expect(noting(share, ran, 'late', () => true)).rejects.toBe(CALL_DROPPED);
    second.release();
    await second.running;
    expect(ran).toEqual([]);
    expect(share.callers).toBe(0);
  });
});
