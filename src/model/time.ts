/**
 * Reading upstream times, which carry no zone, as instants (contract §1, `DateTime`).
 * Payment: `Jan 5, 2024, 3:04:05 PM` (the space before AM/PM may be a narrow no-break space, as
 * `Intl` writes it). KYC: `05-01-2024 15:04:05` (DD-MM-YYYY). An ISO 8601 time with an offset is
 * accepted too. Anything else, or a wall time that does not exist in the zone (a DST gap), is
 * refused rather than guessed: a wrong date is worse than none.
 */
import { DateTime } from 'luxon';

const PAYMENT_FORMATS = [
  'LLL d, yyyy, h:mm:ss a',
  'LLLL d, yyyy, h:mm:ss a',
  'LLL d, yyyy h:mm:ss a',
];
const KYC_FORMATS = ['dd-MM-yyyy HH:mm:ss', 'd-M-yyyy H:mm:ss'];
const HAS_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export type UpstreamTimeForm = 'payment' | 'kyc';

function normalize(text: string): string {
  return text
    .replace(/[\u00a0\u202f\u2007\u2009]/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/\bSept\b/i, 'Sep')
    .trim();
}

/**
 * The instant as ISO 8601 in UTC (`2024-01-05T15:04:05.000Z`), or `undefined` when the text
 * cannot be read with certainty.
 */
export function parseUpstreamTime(
  text: string,
  form: UpstreamTimeForm,
  zone: string,
): string | undefined {
  const clean = normalize(text);
  if (HAS_OFFSET.test(clean)) {
    const iso = DateTime.fromISO(clean, { setZone: true });
    return iso.isValid ? (iso.toUTC().toISO() ?? undefined) : undefined;
  }
  if (form === 'payment') {
    // luxon's `h` takes 0 and 13-23 too; with AM/PM only 1-12 is unambiguous.
    const hour = /,? (\d{1,2}):\d{2}:\d{2} [AP]M$/i.exec(clean)?.[1];
    if (hour === undefined || Number(hour) < 1 || Number(hour) > 12) return undefined;
  }
  if (form === 'kyc') {
    // luxon reads 24:00:00 as the next day's midnight; the upstream form has hours 00-23.
    const hour = / (\d{1,2}):\d{2}:\d{2}$/.exec(clean)?.[1];
    if (hour === undefined || Number(hour) > 23) return undefined;
  }
  const formats = form === 'payment' ? PAYMENT_FORMATS : KYC_FORMATS;
  for (const format of formats) {
    const parsed = DateTime.fromFormat(clean, format, { zone, locale: 'en-US' });
    if (!parsed.isValid) continue;
    // luxon moves a wall time inside a DST gap; such a time never happened, so refuse it.
    const wall = DateTime.fromFormat(clean, format, { zone: 'UTC', locale: 'en-US' });
    if (parsed.hour !== wall.hour || parsed.minute !== wall.minute || parsed.day !== wall.day) {
      return undefined;
    }
    // A wall time in the hour repeated when clocks go back happened twice: refuse to pick one.
    if (parsed.getPossibleOffsets().length > 1) return undefined;
    return parsed.toUTC().toISO() ?? undefined;
  }
  return undefined;
}
