import { describe, expect, it } from 'vitest';
import { Deadlines, Timed } from '../../src/upstream/deadlines.ts';

/** An entry that notes its name in `told` when its deadline comes. */
class Entry extends Timed {
  readonly name: string;
  readonly told: string[];
  constructor(name: string, told: string[]) {
    super();
    this.name = name;
    this.told = told;
  }
  override timedOut(): void {
    this.told.push(this.name);
  }
}

/** Deadlines on a clock and a timer the test moves by hand. */
function manual() {
  let now = 0;
  const timers: Array<{ fire: () => void; at: number; cleared: boolean }> = [];
  const deadlines = new Deadlines({
    now: () => now,
    setTimer: (fire, ms) => {
      const timer = { fire, at: now + ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer: (timer) => {
      (timer as { cleared: boolean }).cleared = true;
    },
  });
  const armed = () => timers.filter((timer) => !timer.cleared);
  return {
    deadlines,
    armed,
    /** Moves the clock to `to` and fires the timers due by then, as Node would. */
    advance(to: number) {
      now = to;
      for (const timer of [...timers]) {
        if (!timer.cleared && timer.at <= to) {
          timer.cleared = true;
          timer.fire();
        }
      }
    },
  };
}

describe('Deadlines', () => {
  it('tells each entry when its own deadline comes, in the order of the deadlines, on one timer', () => {
    const { deadlines, armed, advance } = manual();
    const told: string[] = [];
    deadlines.add(new Entry('a', told), 100);
    deadlines.add(new Entry('c', told), 300);
    // Listed later with an earlier deadline (a read that waited longer in a queue).
    deadlines.add(new Entry('b', told), 200);
    expect(armed().map((timer) => timer.at)).toEqual([100]);
    advance(99);
    expect(told).toEqual([]);
    advance(100);
    expect(told).toEqual(['a']);
    expect(armed().map((timer) => timer.at)).toEqual([200]);
    advance(250);
    expect(told).toEqual(['a', 'b']);
    advance(300);
    expect(told).toEqual(['a', 'b', 'c']);
    expect(deadlines.size).toBe(0);
    expect(armed()).toEqual([]);
  });

  it('never tells an entry that left, and sets its timer again for the first one still listed', () => {
    const { deadlines, armed, advance } = manual();
    const told: string[] = [];
    const a = new Entry('a', told);
    const b = new Entry('b', told);
    deadlines.add(a, 100);
    deadlines.add(b, 150);
    // Settled before its deadline: the timer stays, and finds nothing due when it fires.
    deadlines.remove(a);
    deadlines.remove(a);
    advance(100);
    expect(told).toEqual([]);
    expect(armed().map((timer) => timer.at)).toEqual([150]);
    deadlines.remove(b);
    advance(150);
    expect(told).toEqual([]);
    expect(deadlines.size).toBe(0);
  });

  it('sets its timer earlier for an entry whose deadline comes before the one it is set for', () => {
    const { deadlines, armed, advance } = manual();
    const told: string[] = [];
    deadlines.add(new Entry('late', told), 5000);
    deadlines.add(new Entry('retry', told), 40);
    expect(armed().map((timer) => timer.at)).toEqual([40]);
    advance(40);
    expect(told).toEqual(['retry']);
    expect(armed().map((timer) => timer.at)).toEqual([5000]);
  });

  it('a timer that fires before the deadline it was set for (its clock rounds) tells no one early', () => {
    const { deadlines, armed, advance } = manual();
    const told: string[] = [];
    deadlines.add(new Entry('a', told), 10.4);
    // Set for 11 ms (rounded up); fired by hand at 10 ms, as a timer on a coarser clock may.
    const [timer] = armed();
    advance(10);
    if (timer) {
      timer.cleared = true;
      timer.fire();
    }
    expect(told).toEqual([]);
    advance(10.4);
    advance(11);
    expect(told).toEqual(['a']);
  });

  it('the same deadline for many entries tells all of them at once', () => {
    const { deadlines, advance } = manual();
    const told: string[] = [];
    for (const name of ['a', 'b', 'c']) deadlines.add(new Entry(name, told), 50);
    advance(50);
    expect(told).toEqual(['a', 'b', 'c']);
  });
});
