/** Field resolvers for upstream times: a time that cannot be read is null plus a field error. */
import { UpstreamBadResponseError, type UpstreamName } from '../../errors.ts';
import { parseUpstreamTime, type UpstreamTimeForm } from '../../model/time.ts';

const FORM: Record<UpstreamName, UpstreamTimeForm> = { payment: 'payment', kyc: 'kyc' };

/** The ISO instant of an upstream time, `null` when absent; throws when unreadable. */
export function readTime(
  upstream: UpstreamName,
  field: string,
  raw: string | null,
  zone: string,
): string | null {
  if (raw === null) return null;
  const iso = parseUpstreamTime(raw, FORM[upstream], zone);
  if (iso === undefined)
    throw new UpstreamBadResponseError(upstream, `${field} is not a readable time`);
  return iso;
}
