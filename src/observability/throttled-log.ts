/**
 * Warnings that may repeat on every request (Redis down) go to the log at most once per
 * interval and per topic, with the number of repeats left out since the last line.
 */
import type { Logger } from './logger.ts';

export type ThrottledWarn = (
  topic: string,
  fields: Record<string, unknown>,
  message: string,
) => void;

/** Builds a warn function that logs each topic at most once every `intervalMs`. */
export function throttledWarn(logger: Logger, intervalMs = 10_000): ThrottledWarn {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (topic, fields, message) => {
    const now = Date.now();
    const seen = last.get(topic);
    if (seen && now - seen.at < intervalMs) {
      seen.suppressed += 1;
      return;
    }
    last.set(topic, { at: now, suppressed: 0 });
    logger.warn({ ...fields, ...(seen?.suppressed && { repeats: seen.suppressed }) }, message);
  };
}
