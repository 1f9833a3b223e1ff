/**
 * Time without waiting: the wall clock (`Date`) that TTLs, token expiry, rate-limit buckets, the
 * circuit breaker and the sandbox's pending payments read is moved forward, while timers and I/O
 * keep real time (only `Date` is faked). The real clock is back when the test ends.
 */
import { onTestFinished, vi } from 'vitest';

/** Moves `Date.now()` forward by `ms` for the rest of the running test. */
export function advanceWallClock(ms: number): void {
  if (!vi.isFakeTimers()) {
    // The fake clock still advances with real time, so that nothing sees time stand still.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    onTestFinished(() => {
      vi.useRealTimers();
    });
  }
  vi.setSystemTime(Date.now() + ms);
}
