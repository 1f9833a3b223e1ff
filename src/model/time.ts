/**
 * Reading upstream times, which carry no zone, as instants (the `DateTime` scalar).
 * Payment: `Jan 5, 2024, 3:04:05 PM` (the space before AM/PM may be a narrow no-break space, as
 * `Intl` writes it). KYC: `05-01-2024 15:04:05` (DD-MM-YYYY). An ISO 8601 time with an offset is
 * accepted too. Anything else — an impossible date, hour 13 PM, 24:00:00, a wall time that does
 * not exist in the zone (a DST gap) or that happened twice (the hour repeated when clocks go
 * back) — is refused rather than guessed: a wrong date is worse than none.
 *
 * Written with regular expressions, `Date.UTC` and one cached `Intl.DateTimeFormat` per zone
 * rather than a date library: this runs for every time field of every response, and a
 * format-string parser cost a fifth of the gateway's CPU on cache hits.
 */

export type UpstreamTimeForm = 'payment' | 'kyc';

const MONTH_NAMES = [
  ['jan', 'january'],
  ['feb', 'february'],
  ['mar', 'march'],
  ['apr', 'april'],
  ['may', 'may'],
  ['jun', 'june'],
  ['jul', 'july'],
  ['aug', 'august'],
  ['sep', 'september'],
  ['oct', 'october'],
  ['nov', 'november'],
  ['dec', 'december'],
] as const;

const MONTHS: ReadonlyMap<string, number> = new Map(
  MONTH_NAMES.flatMap(
    ([short, long], index): Array<[string, number]> => [
      [short, index + 1],
      [long, index + 1],
    ],
  ),
).set('sept', 9);

/** `Jan`, `Feb`, …: the month as the payment service writes it. */
const SHORT_MONTHS = MONTH_NAMES.map(([short]) => `${short[0]?.toUpperCase()}${short.slice(1)}`);

const PAYMENT = /^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4}),? (\d{1,2}):(\d{2}):(\d{2}) ([AaPp][Mm])$/;
const KYC = /^(\d{1,2})-(\d{1,2})-(\d{4}) (\d{1,2}):(\d{2}):(\d{2})$/;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const SPACES = /[\s\u00a0\u202f\u2007\u2009]+/g;
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The zone's offset from UTC at instant `t` (whole seconds), in ms: local = t + offset. */
function offsetFromIntl(t: number, zone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(t)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const local = Date.UTC(
    fields.year ?? 0,
    (fields.month ?? 1) - 1,
    fields.day ?? 1,
    fields.hour ?? 0,
    fields.minute ?? 0,
    fields.second ?? 0,
  );
  return local - t;
}

/** Days remembered per zone; past it the memory starts again (a bound, not an eviction order). */
const MAX_DAYS_PER_ZONE = 20_000;
/** Per zone: UTC day index → the offset throughout that day, or NaN when it changes inside it. */
const offsetsByDay = new Map<string, Map<number, number>>();

/**
 * `offsetFromIntl`, remembered per UTC day: `formatToParts` costs microseconds and a record has
 * several times. A day whose first and last second have the same offset has it throughout (no
 * zone changes its offset twice in a day); the few days with a change inside them are computed
 * each time.
 */
function offsetAt(t: number, zone: string): number {
  let days = offsetsByDay.get(zone);
  if (!days) {
    days = new Map();
    offsetsByDay.set(zone, days);
  }
  const day = Math.floor(t / DAY_MS);
  let offset = days.get(day);
  if (offset === undefined) {
    const first = offsetFromIntl(day * DAY_MS, zone);
    offset = first === offsetFromIntl((day + 1) * DAY_MS - 1000, zone) ? first : Number.NaN;
    if (days.size >= MAX_DAYS_PER_ZONE) days.clear();
    days.set(day, offset);
  }
  return Number.isNaN(offset) ? offsetFromIntl(t, zone) : offset;
}

/** The one instant at which the zone's clocks showed this wall time, or undefined. */
function wallToInstant(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  zone: string,
): number | undefined {
  if (
    year < 1000 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return undefined;
  }
  if (day > daysInMonth(year, month)) return undefined;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (zone === 'UTC') return wall;
  // Every offset the zone could have near this time; keep those that reproduce the wall time
  // (distinct offsets give distinct instants).
  const before = offsetAt(wall - DAY_MS, zone);
  const same = offsetAt(wall, zone);
  const after = offsetAt(wall + DAY_MS, zone);
  let instant: number | undefined;
  let found = 0;
  const keep = (offset: number) => {
    if (offsetAt(wall - offset, zone) === offset) {
      instant = wall - offset;
      found += 1;
    }
  };
  keep(before);
  if (same !== before) keep(same);
  if (after !== before && after !== same) keep(after);
  // None: a DST gap (never happened). Two: the repeated hour (happened twice).
  return found === 1 ? instant : undefined;
}

/** Days in a month of the proleptic Gregorian calendar (the one `Date` uses). */
function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

function parseIso(text: string): string | undefined {
  const match = ISO.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi] = match;
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi)));
  if (check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59) return undefined;
  const value = Date.parse(text);
  return Number.isNaN(value) ? undefined : new Date(value).toISOString();
}

/** The character code of `0` (that of the digit n is DIGIT_0 + n). */
const DIGIT_0 = 0x30;
/** The instants whose year has four digits (`toISOString` writes others with a sign). */
const FOUR_DIGIT_YEARS_FROM = Date.UTC(1000, 0, 1);
const FOUR_DIGIT_YEARS_TO = Date.UTC(9999, 11, 31, 23, 59, 59);

/**
 * `new Date(instant).toISOString()` for a whole second of a four-digit year, written from the
 * civil date of its day number (the days-to-date conversion of the proleptic Gregorian calendar,
 * in 400-year eras) with no Date made: several times per record, where a Date and its
 * formatting took most of reading a time. Any other instant goes through Date.
 */
export function isoOfInstant(instant: number): string {
  if (instant % 1000 !== 0 || instant < FOUR_DIGIT_YEARS_FROM || instant > FOUR_DIGIT_YEARS_TO) {
    return new Date(instant).toISOString();
  }
  const seconds = instant / 1000;
  const days = Math.floor(seconds / 86_400);
  const ofDay = seconds - days * 86_400;
  // Days since 0000-03-01, so that the leap day ends each year of the count.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(ofDay / 3600);
  const minute = Math.floor((ofDay - hour * 3600) / 60);
  const second = ofDay - hour * 3600 - minute * 60;
  // One flat string of its 24 characters: a template of its parts would be a tree of a dozen
  // strings, kept so in the stored record and flattened again when the answer is written.
  return String.fromCharCode(
    DIGIT_0 + Math.floor(year / 1000),
    DIGIT_0 + (Math.floor(year / 100) % 10),
    DIGIT_0 + (Math.floor(year / 10) % 10),
    DIGIT_0 + (year % 10),
    0x2d /* - */,
    DIGIT_0 + Math.floor(month / 10),
    DIGIT_0 + (month % 10),
    0x2d,
    DIGIT_0 + Math.floor(day / 10),
    DIGIT_0 + (day % 10),
    0x54 /* T */,
    DIGIT_0 + Math.floor(hour / 10),
    DIGIT_0 + (hour % 10),
    0x3a /* : */,
    DIGIT_0 + Math.floor(minute / 10),
    DIGIT_0 + (minute % 10),
    0x3a,
    DIGIT_0 + Math.floor(second / 10),
    DIGIT_0 + (second % 10),
    0x2e /* . */,
    DIGIT_0,
    DIGIT_0,
    DIGIT_0,
    0x5a /* Z */,
  );
}

/** The number written by the ASCII digits `text[start..end)`, or -1 when one is not a digit. */
function digitsAt(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i += 1) {
    const d = text.charCodeAt(i) - 0x30;
    // Past the end charCodeAt is NaN, which is no digit either.
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * The canonical payment form only — `Jan 5, 2024, 3:04:05 PM` as the payment service writes
 * it: a three-letter month in title case, single spaces, a space or a narrow no-break space before
 * AM/PM in capitals — read character by character, with no regular expression and no copy of the
 * text. The instant; `NaN` when that wall time never happened or happened twice in the zone (or
 * is no date); `undefined` for any other text, which then goes through {@link PAYMENT} (the
 * accepted variations). Accepts nothing {@link PAYMENT} would refuse and reads it the same way.
 */
function canonicalPayment(text: string, zone: string): number | undefined {
  const n = text.length;
  if (text.charCodeAt(3) !== 0x20) return undefined;
  const month = SHORT_MONTHS.indexOf(text.slice(0, 3)) + 1;
  if (month === 0) return undefined;
  const dayEnd = text.charCodeAt(5) === 0x2c /* , */ ? 5 : 6;
  const day = digitsAt(text, 4, dayEnd);
  let i = dayEnd;
  if (day < 0 || text.charCodeAt(i) !== 0x2c || text.charCodeAt(i + 1) !== 0x20) return undefined;
  const year = digitsAt(text, i + 2, i + 6);
  i += 6;
  if (year < 0 || text.charCodeAt(i) !== 0x2c || text.charCodeAt(i + 1) !== 0x20) return undefined;
  i += 2;
  const hourEnd = text.charCodeAt(i + 1) === 0x3a /* : */ ? i + 1 : i + 2;
  const hour12 = digitsAt(text, i, hourEnd);
  i = hourEnd;
  if (hour12 < 0 || text.charCodeAt(i) !== 0x3a || text.charCodeAt(i + 3) !== 0x3a)
    return undefined;
  const minute = digitsAt(text, i + 1, i + 3);
  const second = digitsAt(text, i + 4, i + 6);
  i += 6;
  const space = text.charCodeAt(i);
  if (minute < 0 || second < 0 || (space !== 0x20 && space !== 0x202f) || i + 3 !== n) {
    return undefined;
  }
  const meridiem = text.slice(i + 1);
  // An hour outside 1-12 is refused by the patterns' reading.
  if ((meridiem !== 'AM' && meridiem !== 'PM') || hour12 < 1 || hour12 > 12) return undefined;
  const hour = (hour12 % 12) + (meridiem === 'PM' ? 12 : 0);
  return wallToInstant(year, month, day, hour, minute, second, zone) ?? Number.NaN;
}

/**
 * The canonical KYC form only — `05-01-2024 15:04:05`, two-digit fields — read character by
 * character; the instant, `NaN` or `undefined` as {@link canonicalPayment}.
 */
function canonicalKyc(text: string, zone: string): number | undefined {
  if (
    text.length !== 19 ||
    text.charCodeAt(2) !== 0x2d /* - */ ||
    text.charCodeAt(5) !== 0x2d ||
    text.charCodeAt(10) !== 0x20 ||
    text.charCodeAt(13) !== 0x3a /* : */ ||
    text.charCodeAt(16) !== 0x3a
  ) {
    return undefined;
  }
  const day = digitsAt(text, 0, 2);
  const month = digitsAt(text, 3, 5);
  const year = digitsAt(text, 6, 10);
  const hour = digitsAt(text, 11, 13);
  const minute = digitsAt(text, 14, 16);
  const second = digitsAt(text, 17, 19);
  if (day < 0 || month < 0 || year < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  return wallToInstant(year, month, day, hour, minute, second, zone) ?? Number.NaN;
}

/**
 * The instant as ISO 8601 in UTC (`2024-01-05T15:04:05.000Z`), or `undefined` when the text
 * cannot be read with certainty. The forms the services write are read without a regular
 * expression (the hot path: several times per record); other spellings through the patterns.
 */
export function parseUpstreamTime(
  text: string,
  form: UpstreamTimeForm,
  zone: string,
): string | undefined {
  const instant = form === 'payment' ? canonicalPayment(text, zone) : canonicalKyc(text, zone);
  if (instant === undefined) return parseWithPatterns(text, form, zone);
  return Number.isNaN(instant) ? undefined : isoOfInstant(instant);
}

/** {@link parseUpstreamTime} for any spelling its forms allow. */
function parseWithPatterns(text: string, form: UpstreamTimeForm, zone: string): string | undefined {
  const clean = text.replace(SPACES, ' ').trim();
  if (clean.includes('T')) return parseIso(clean);
  let instant: number | undefined;
  if (form === 'payment') {
    const match = PAYMENT.exec(clean);
    if (!match) return undefined;
    const [, monthName = '', day, year, hour12, minute, second, meridiem = ''] = match;
    const month = MONTHS.get(monthName.toLowerCase());
    const h = Number(hour12);
    // With AM/PM only 1-12 is unambiguous.
    if (month === undefined || h < 1 || h > 12) return undefined;
    const hour = (h % 12) + (meridiem.toUpperCase() === 'PM' ? 12 : 0);
    instant = wallToInstant(
      Number(year),
      month,
      Number(day),
      hour,
      Number(minute),
      Number(second),
      zone,
    );
  } else {
    const match = KYC.exec(clean);
    if (!match) return undefined;
    const [, day, month, year, hour, minute, second] = match;
    instant = wallToInstant(
      Number(year),
      Number(month),
      Number(day),
      Number(hour),
      Number(minute),
      Number(second),
      zone,
    );
  }
  return instant === undefined ? undefined : isoOfInstant(instant);
}
