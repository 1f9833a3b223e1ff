import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { CALL_DROPPED, Slots } from '../../src/upstream/slots.ts';

/** A work that runs until `finish` is called, noting `name` in `ran` when it starts. */
function held(ran: string[], name: string): { work: () => Promise<string>; finish: () => void } {
  let finish = () => {};
  const work = () => {
    ran.push(name);
    return new Promise<string>((resolve) => {
      finish = () => resolve(name);
    });
  };
  return { work, finish: () => finish() };
}

/** A work that notes `name` in `ran` and ends at once. */
const noting = (ran: string[], name: string) => async () => {
  ran.push(name);
  return name;
};

describe('Slots', () => {
  it("runs a waiting call in its own caller's context, not in that of the call that made way", async () => {
    const requests = new AsyncLocalStorage<string>();
    const slots = new Slots(1, 10);
    const ran: string[] = [];
    const a = held(ran, 'a');
    const first = requests.run('request a', () => slots.run(a.work));
    const seen: Array<string | undefined> = [];
    const second = requests.run('request b', () =>
      slots.run(async () => {
        seen.push(requests.getStore());
        return 'b';
      }),
    );
    expect(slots.queued).toBe(1);
    // The slot is handed over from the end of request a's call.
    a.finish();
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    expect(seen).toEqual(['request b']);
  });

  it('runs at most its limit at once, the others in arrival order, and says when it is idle', async () => {
    let idle = 0;
    const slots = new Slots(2, 10, { onIdle: () => (idle += 1) });
    const ran: string[] = [];
    const a = held(ran, 'a');
    const b = held(ran, 'b');
    const running = [slots.run(a.work), slots.run(b.work)];
    const waiting = ['c', 'd', 'e'].map((name) => slots.run(noting(ran, name)));
    expect(ran).toEqual(['a', 'b']);
    expect(slots.free).toBe(false);
    expect(slots.queued).toBe(3);
    b.finish();
    a.finish();
    expect(await Promise.all([...running, ...waiting])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(ran).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(slots.active).toBe(0);
    expect(slots.free).toBe(true);
    expect(idle).toBe(1);
  });

  it('hands a freed slot to the call that waited, never to one that arrives meanwhile', async () => {
    const slots = new Slots(1, 10);
    const ran: string[] = [];
    const a = held(ran, 'a');
    const first = slots.run(a.work);
    const waited = slots.run(noting(ran, 'waited'));
    const later: Array<Promise<string> | undefined> = [];
    // Calls arriving as the slot frees: in the same step, and in each of the microtasks after.
    a.finish();
    later.push(slots.run(noting(ran, 'late0')));
    let depth = 0;
    const arrive = () => {
      depth += 1;
      later.push(slots.run(noting(ran, `late${depth}`)));
      if (depth < 4) queueMicrotask(arrive);
    };
    queueMicrotask(arrive);
    // Every arrival has been made once the microtasks are over.
    await new Promise((resolve) => setImmediate(resolve));
    expect(later).toHaveLength(5);
    await Promise.all([first, waited, ...later]);
    expect(ran).toEqual(['a', 'waited', 'late0', 'late1', 'late2', 'late3', 'late4']);
  });

  it('refuses past its queue bound (undefined), and keeps a limit of its own for a call that brings one', async () => {
    const slots = new Slots(1, 1);
    const ran: string[] = [];
    const a = held(ran, 'a');
    const first = slots.run(a.work);
    const queued = slots.run(noting(ran, 'queued'));
    expect(slots.run(noting(ran, 'refused'))).toBeUndefined();
    a.finish();
    await Promise.all([first, queued]);
    expect(ran).toEqual(['a', 'queued']);
    // A call bringing a limit of 2 runs beside the one in flight.
    const b = held(ran, 'b');
    const second = slots.run(b.work, undefined, 2);
    const beside = slots.run(noting(ran, 'beside'), undefined, 2);
    await beside;
    b.finish();
    await second;
    expect(ran).toEqual(['a', 'queued', 'b', 'beside']);
  });

  it('takes a free slot at once for a caller that gives it back itself, and hands it on then', async () => {
    const slots = new Slots(1, 10);
    const ran: string[] = [];
    expect(slots.take()).toBe(true);
    // Held: a call arriving now waits, and so does a take.
    expect(slots.take()).toBe(false);
    const waiting = slots.run(noting(ran, 'b'));
    expect(slots.queued).toBe(1);
    expect(ran).toEqual([]);
    // Given back: the waiting call takes it (in arrival order, before any take).
    slots.release();
    expect(slots.take()).toBe(false);
    expect(await waiting).toBe('b');
    expect(ran).toEqual(['b']);
    expect(slots.active).toBe(0);
    // A limit of the caller's own, as for run.
    expect(slots.take(0)).toBe(false);
    expect(slots.take()).toBe(true);
    expect(slots.active).toBe(1);
  });

  it('frees the slot of a work that throws or rejects', async () => {
    const slots = new Slots(1, 10);
    const thrown = slots.run(() => {
      throw new Error('thrown');
    });
    const rejected = slots.run(() => Promise.reject(new Error('rejected')));
    const after = slots.run(async () => 'after');
    await expect(thrown).rejects.toThrow('thrown');
    await expect(rejected).rejects.toThrow('rejected');
    await expect(after).resolves.toBe('after');
    expect(slots.active).toBe(0);
  });

  it('drops a waiting call nobody wants when its turn comes, without running it', async () => {
    const slots = new Slots(1, 10);
    const ran: string[] = [];
    const a = held(ran, 'a');
    const first = slots.run(a.work);
    let left = false;
    const dropped = slots.run(noting(ran, 'dropped'), () => left);
    const kept = slots.run(noting(ran, 'kept'), () => false);
    left = true;
    a.finish();
    await expect(dropped).rejects.toBe(CALL_DROPPED);
    await Promise.all([first, kept]);
    expect(ran).toEqual(['a', 'kept']);
  });

  it('a full queue drops its unwanted calls from anywhere in it, and keeps the others in order', async () => {
    let now = 0;
    const slots = new Slots(1, 5, { now: () => now });
    const ran: string[] = [];
    const a = held(ran, 'a');
    const first = slots.run(a.work);
    const left = new Set<string>();
    const queue = ['b', 'c', 'd', 'e', 'f'].map((name) =>
      slots.run(noting(ran, name), () => left.has(name)),
    );
    expect(slots.queued).toBe(5);
    // The second, the fourth and the last leave; a new call wants a place.
    for (const name of ['c', 'e', 'f']) left.add(name);
    now += 100;
    const late = slots.run(noting(ran, 'g'));
    expect(slots.queued).toBe(3);
    // Another call fits after the ones kept, at the end.
    const later = slots.run(noting(ran, 'h'));
    expect(slots.queued).toBe(4);
    a.finish();
    const settled = await Promise.allSettled([first, ...queue, late, later]);
    expect(settled.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(ran).toEqual(['a', 'b', 'd', 'g', 'h']);
    expect(slots.queued).toBe(0);
    expect(slots.active).toBe(0);
  });
});
