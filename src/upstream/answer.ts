/**
 * Turns an upstream HTTP answer into a record, `null` (unknown) or a gateway error. Shared by
 * both clients so that both interfaces follow one rule set.
 */
import type { z } from 'zod';
import {
  UpstreamAuthFailedError,
  UpstreamBadResponseError,
  type UpstreamName,
  UpstreamUnavailableError,
} from '../errors.ts';
import type { HttpResult } from './http.ts';
import { describeIssue } from './shapes.ts';

/** A message in an error envelope that says the record does not exist. */
// Only these phrases: "Unknown error, please retry" says nothing about the record, and a null
// there would tell a merchant that a real payment does not exist.
const NOT_FOUND =
  /not\s*found|does\s*not\s*exist|doesn't\s*exist|no\s+such\s+user|unknown\s+(user|transaction|reference)/i;

/**
 * Whether a number in this JSON text may not survive a binary double: one with more than 15
 * significant digits (every decimal of 15 or fewer reads back from its double as the same value).
 * A reviver that sees each value's source text makes `JSON.parse` several times slower, so it is
 * used only then. A run of 16 digits and dots anywhere (in a string too) counts: a false alarm
 * only costs the slower parse.
 */
function mayLoseDigits(text: string): boolean {
  return /[0-9][0-9.]{15,}/.test(text);
}

/**
 * Reads an answer: 404 and "not found" envelopes are `null`; 401/403 are the gateway's own
 * credentials refused; 429 and 5xx (after retries) are unavailability; anything else that is
 * not the documented JSON is a bad response. Never quotes the body. `reviver` sees the JSON
 * text of each value as it is parsed (its third argument), before numbers become doubles.
 */
export function readAnswer<T extends z.ZodType>(
  upstream: UpstreamName,
  result: HttpResult,
  shape: T,
  reviver?: (key: string, value: unknown, context?: { source?: string }) => unknown,
): z.output<T> | null {
  const { status } = result;
  if (status === 404) return null;
  if (status === 401 || status === 403) throw new UpstreamAuthFailedError(upstream, status);
  if (status === 429) throw new UpstreamUnavailableError(upstream, 'rate limited by the upstream');
  if (status >= 500) throw new UpstreamUnavailableError(upstream, `HTTP ${status}`);
  if (status < 200 || status >= 300) {
    throw new UpstreamBadResponseError(upstream, `unexpected HTTP ${status}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(result.body, reviver && mayLoseDigits(result.body) ? reviver : undefined);
  } catch {
    throw new UpstreamBadResponseError(upstream, 'the body is not JSON');
  }
  // The envelope's flag, read by hand: a second schema pass per answer showed in profiles.
  if (typeof json === 'object' && json !== null && 'error' in json) {
    const { error, message } = json as { error: unknown; message?: unknown };
    if (error === true || error === 'true') {
      if (typeof message === 'string' && NOT_FOUND.test(message)) return null;
      throw new UpstreamBadResponseError(upstream, 'it reported an error');
    }
  }
  const parsed = shape.safeParse(json);
  if (!parsed.success) throw new UpstreamBadResponseError(upstream, describeIssue(parsed.error));
  return parsed.data;
}
