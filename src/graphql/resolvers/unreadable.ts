/**
 * The one place where a value normalized as unreadable (src/upstream/shapes.ts) becomes what the
 * gateway promises: `null` plus an error on that field only, never a guessed value.
 */
import { UpstreamBadResponseError, type UpstreamName } from '../../errors.ts';
import { isUnreadable, type Unreadable } from '../../model/records.ts';

/** The value as normalized; throws the field's error when it was unreadable. */
export function readable<T>(
  value: T | Unreadable | null,
  upstream: UpstreamName,
  problem: string,
): T | null {
  if (isUnreadable(value)) throw new UpstreamBadResponseError(upstream, problem);
  return value;
}
