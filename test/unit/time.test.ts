import { describe, expect, it } from 'vitest';
import { isoOfInstant, parseUpstreamTime } from '../../src/model/time.ts';
import { upstreamShapes } from '../../src/upstream/shapes.ts';

describe('parseUpstreamTime: payment form', () => {
  it('reads the documented form in UTC', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05 PM', 'payment', 'UTC')).toBe(
      '2024-01-05T15:04:05.000Z',
    );
  });

  it('reads an AM time in UTC', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05 AM', 'payment', 'UTC')).toBe(
      '2024-01-05T03:04:05.000Z',
    );
  });

  it('accepts a narrow no-break space (U+202F) before PM, as Intl writes it', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05\u202fPM', 'payment', 'UTC')).toBe(
      '2024-01-05T15:04:05.000Z',
    );
  });

  it('accepts a no-break space (U+00A0) before PM', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05\u00a0PM', 'payment', 'UTC')).toBe(
      '2024-01-05T15:04:05.000Z',
    );
  });

  it('reads 12:30 AM as half past midnight', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 12:30:00 AM', 'payment', 'UTC')).toBe(
      '2024-01-05T00:30:00.000Z',
    );
  });

  it('reads 12:00 PM as noon', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 12:00:00 PM', 'payment', 'UTC')).toBe(
      '2024-01-05T12:00:00.000Z',
    );
  });

  it('reads 11:59:59 PM as the last second of the day', () => {
    expect(parseUpstreamTime('Dec 31, 2024, 11:59:59 PM', 'payment', 'UTC')).toBe(
      '2024-12-31T23:59:59.000Z',
    );
  });

  it('reads the time in Africa/Lagos (+01:00)', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05 PM', 'payment', 'Africa/Lagos')).toBe(
      '2024-01-05T14:04:05.000Z',
    );
  });

  it('reads the time in America/New_York in winter (EST, -05:00)', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05 PM', 'payment', 'America/New_York')).toBe(
      '2024-01-05T20:04:05.000Z',
    );
  });

  it('reads the time in America/New_York in summer (EDT, -04:00)', () => {
    expect(parseUpstreamTime('Jul 5, 2024, 3:04:05 PM', 'payment', 'America/New_York')).toBe(
      '2024-07-05T19:04:05.000Z',
    );
  });

  it('uses the right offset on either side of the spring-forward gap', () => {
    expect(parseUpstreamTime('Mar 10, 2024, 1:59:59 AM', 'payment', 'America/New_York')).toBe(
      '2024-03-10T06:59:59.000Z',
    );
    expect(parseUpstreamTime('Mar 10, 2024, 3:00:00 AM', 'payment', 'America/New_York')).toBe(
      '2024-03-10T07:00:00.000Z',
    );
  });

  it('refuses a wall time inside the DST gap (it never happened)', () => {
    expect(
      parseUpstreamTime('Mar 10, 2024, 2:30:00 AM', 'payment', 'America/New_York'),
    ).toBeUndefined();
    expect(
      parseUpstreamTime('Mar 10, 2024, 2:00:00 AM', 'payment', 'America/New_York'),
    ).toBeUndefined();
  });

  it('accepts the same wall time in a zone without that gap', () => {
    expect(parseUpstreamTime('Mar 10, 2024, 2:30:00 AM', 'payment', 'UTC')).toBe(
      '2024-03-10T02:30:00.000Z',
    );
  });

  it('refuses hour 13 with PM', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 13:04:05 PM', 'payment', 'UTC')).toBeUndefined();
  });

  it('refuses hour 0 with AM', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 0:04:05 AM', 'payment', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('Jan 5, 2024, 00:04:05 AM', 'payment', 'UTC')).toBeUndefined();
  });

  it('refuses a 12-hour time without AM/PM', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05', 'payment', 'UTC')).toBeUndefined();
  });

  it('accepts Feb 29 in a leap year', () => {
    expect(parseUpstreamTime('Feb 29, 2024, 10:00:00 AM', 'payment', 'UTC')).toBe(
      '2024-02-29T10:00:00.000Z',
    );
  });

  it('refuses Feb 29 in a common year', () => {
    expect(parseUpstreamTime('Feb 29, 2023, 10:00:00 AM', 'payment', 'UTC')).toBeUndefined();
  });

  it('refuses an impossible day, minute or second', () => {
    expect(parseUpstreamTime('Jan 32, 2024, 3:04:05 PM', 'payment', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('Jan 5, 2024, 3:60:05 PM', 'payment', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:60 PM', 'payment', 'UTC')).toBeUndefined();
  });

  it('refuses garbage', () => {
    for (const text of ['', '   ', 'yesterday', 'Jan', 'Foo 5, 2024, 3:04:05 PM', '1704467045']) {
      expect(parseUpstreamTime(text, 'payment', 'UTC'), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('refuses the KYC form when the payment form is expected', () => {
    expect(parseUpstreamTime('05-01-2024 15:04:05', 'payment', 'UTC')).toBeUndefined();
  });

  it('refuses an ISO time without offset rather than guessing its zone', () => {
    expect(parseUpstreamTime('2024-01-05T15:04:05', 'payment', 'UTC')).toBeUndefined();
  });

  it('returns a UTC ISO string that round-trips through Date', () => {
    const iso = parseUpstreamTime('Jul 5, 2024, 3:04:05 PM', 'payment', 'Africa/Lagos');
    expect(iso).toBeDefined();
    expect(new Date(iso as string).toISOString()).toBe(iso);
  });
});

describe('parseUpstreamTime: KYC form (DD-MM-YYYY)', () => {
  it('reads 05-01-2024 as 5 January, not 1 May', () => {
    expect(parseUpstreamTime('05-01-2024 15:04:05', 'kyc', 'UTC')).toBe('2024-01-05T15:04:05.000Z');
  });

  it('reads a day above 12', () => {
    expect(parseUpstreamTime('31-12-2024 23:59:59', 'kyc', 'UTC')).toBe('2024-12-31T23:59:59.000Z');
  });

  it('reads midnight', () => {
    expect(parseUpstreamTime('01-03-2024 00:00:00', 'kyc', 'UTC')).toBe('2024-03-01T00:00:00.000Z');
  });

  it('applies the zone', () => {
    expect(parseUpstreamTime('05-01-2024 15:04:05', 'kyc', 'Africa/Lagos')).toBe(
      '2024-01-05T14:04:05.000Z',
    );
    expect(parseUpstreamTime('05-07-2024 15:04:05', 'kyc', 'America/New_York')).toBe(
      '2024-07-05T19:04:05.000Z',
    );
  });

  it('refuses 31 February', () => {
    expect(parseUpstreamTime('31-02-2024 10:00:00', 'kyc', 'UTC')).toBeUndefined();
  });

  it('refuses a month above 12 (MM-DD-YYYY is not this form)', () => {
    expect(parseUpstreamTime('12-31-2024 10:00:00', 'kyc', 'UTC')).toBeUndefined();
  });

  it('refuses 29-02 in a common year and accepts it in a leap year', () => {
    expect(parseUpstreamTime('29-02-2023 10:00:00', 'kyc', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('29-02-2024 10:00:00', 'kyc', 'UTC')).toBe('2024-02-29T10:00:00.000Z');
  });

  it('refuses a DST-gap wall time', () => {
    expect(parseUpstreamTime('10-03-2024 02:30:00', 'kyc', 'America/New_York')).toBeUndefined();
  });

  it('refuses the payment form when the KYC form is expected', () => {
    expect(parseUpstreamTime('Jan 5, 2024, 3:04:05 PM', 'kyc', 'UTC')).toBeUndefined();
  });

  it('refuses an ISO time without offset rather than guessing its zone', () => {
    expect(parseUpstreamTime('2024-01-05T15:04:05', 'kyc', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('2024-01-05 15:04:05', 'kyc', 'UTC')).toBeUndefined();
  });

  it('refuses garbage', () => {
    for (const text of ['', 'not a date', '05-01-2024', '15:04:05', 'aa-bb-cccc dd:ee:ff']) {
      expect(parseUpstreamTime(text, 'kyc', 'UTC'), JSON.stringify(text)).toBeUndefined();
    }
  });
});

describe('parseUpstreamTime: ISO 8601 with offset', () => {
  it('accepts Z in either form and ignores the configured zone', () => {
    expect(parseUpstreamTime('2024-01-05T15:04:05Z', 'payment', 'America/New_York')).toBe(
      '2024-01-05T15:04:05.000Z',
    );
    expect(parseUpstreamTime('2024-01-05T15:04:05.123Z', 'kyc', 'Africa/Lagos')).toBe(
      '2024-01-05T15:04:05.123Z',
    );
  });

  it('converts a numeric offset to UTC', () => {
    expect(parseUpstreamTime('2024-01-05T15:04:05+01:00', 'kyc', 'UTC')).toBe(
      '2024-01-05T14:04:05.000Z',
    );
    expect(parseUpstreamTime('2024-01-05T15:04:05-05:00', 'payment', 'UTC')).toBe(
      '2024-01-05T20:04:05.000Z',
    );
  });

  it('refuses an impossible ISO date even with an offset', () => {
    expect(parseUpstreamTime('2024-13-05T15:04:05Z', 'payment', 'UTC')).toBeUndefined();
    expect(parseUpstreamTime('2023-02-29T15:04:05Z', 'kyc', 'UTC')).toBeUndefined();
  });
});

describe('upstream times normalized once, when the record arrives', () => {
  const payment = (zone: string, txTimestamp: unknown) =>
    upstreamShapes(zone).transactionResponse.parse({ data: { txStatus: 'PENDING', txTimestamp } })
      .data.timestamp;
  const kyc = (zone: string, createdAt: unknown) =>
    upstreamShapes(zone).kycResponse.parse({
      data: { levels: [{ level: 1, levelSlug: 'tier_1', kyc: [{ name: 'x', createdAt }] }] },
    }).data.levels[0]?.checks[0]?.createdAt;

  it('stores the instant, read in the zone of the shapes', () => {
    expect(payment('America/New_York', 'Jul 5, 2024, 3:04:05\u202fPM')).toBe(
      '2024-07-05T19:04:05.000Z',
    );
    expect(kyc('Africa/Lagos', '05-01-2024 15:04:05')).toBe('2024-01-05T14:04:05.000Z');
    expect(payment('Africa/Lagos', '2024-01-05T15:04:05Z')).toBe('2024-01-05T15:04:05.000Z');
  });

  it('keeps an absent time null', () => {
    expect(payment('UTC', null)).toBeNull();
    expect(payment('UTC', undefined)).toBeNull();
    expect(kyc('UTC', undefined)).toBeNull();
  });

  it('marks a wall time that never happened or happened twice, never guessing', () => {
    expect(payment('America/New_York', 'Mar 10, 2024, 2:30:00 AM')).toEqual({ unreadable: true });
    expect(payment('America/New_York', 'Nov 3, 2024, 1:30:00 AM')).toEqual({ unreadable: true });
    expect(kyc('America/New_York', '10-03-2024 02:30:00')).toEqual({ unreadable: true });
    // The same wall time is one instant in UTC.
    expect(payment('UTC', 'Mar 10, 2024, 2:30:00 AM')).toBe('2024-03-10T02:30:00.000Z');
  });

  it('marks text that is not a time of its form', () => {
    expect(payment('UTC', '05-01-2024 15:04:05')).toEqual({ unreadable: true });
    expect(kyc('UTC', 'Jan 5, 2024, 3:04:05 PM')).toEqual({ unreadable: true });
  });

  it('still rejects a time of the wrong JSON type, with the whole record', () => {
    const result = upstreamShapes('UTC').transactionResponse.safeParse({
      data: { txStatus: 'PENDING', txTimestamp: 1704467045 },
    });
    expect(result.success).toBe(false);
  });
});

describe('parseUpstreamTime: every wall time of a year, in zones with unusual offsets', () => {
  // Offsets are remembered per day; this walks 2024 in 30-minute steps through zones with DST
  // (a whole hour, and Lord Howe's half hour) and a +05:45 zone, and checks each wall time the
  // zone's clocks showed against Intl directly.
  const zones = ['America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
  const pad = (n: number) => String(n).padStart(2, '0');

  it.each(zones)(
    '%s: each wall time reads back as its instant, or is refused when repeated',
    (zone) => {
      const wall = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      const start = Date.UTC(2024, 0, 1);
      const seen = new Map<string, number>();
      const texts: Array<[string, number]> = [];
      for (let t = start; t < start + 366 * 86_400_000; t += 30 * 60_000) {
        const f: Record<string, string> = {};
        for (const part of wall.formatToParts(t)) f[part.type] = part.value;
        const text = `${pad(Number(f.day))}-${pad(Number(f.month))}-${f.year} ${f.hour}:${f.minute}:${f.second}`;
        seen.set(text, (seen.get(text) ?? 0) + 1);
        texts.push([text, t]);
      }
      let repeated = 0;
      for (const [text, t] of texts) {
        const read = parseUpstreamTime(text, 'kyc', zone);
        if ((seen.get(text) ?? 0) > 1) {
          repeated++;
          expect(read, text).toBeUndefined();
        } else {
          expect(read, text).toBe(new Date(t).toISOString());
        }
      }
      // The zones with DST repeat some wall times; the others none.
      if (zone === 'Asia/Kathmandu') expect(repeated).toBe(0);
      else expect(repeated).toBeGreaterThan(0);
    },
  );
});

describe('isoOfInstant (times written without a Date)', () => {
  it('writes every whole second as toISOString does, across four-digit years and their edges', () => {
    let state = 20261127;
    const random = () => {
      // A linear congruential generator: reproducible cases.
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state / 4_294_967_296;
    };
    const from = Date.UTC(1000, 0, 1);
    const to = Date.UTC(9999, 11, 31, 23, 59, 59);
    const instants = [
      from,
      to,
      0,
      Date.UTC(1600, 1, 29),
      Date.UTC(1900, 1, 28, 23, 59, 59),
      Date.UTC(2000, 1, 29, 12),
      Date.UTC(2024, 11, 31, 23, 59, 59),
      Date.UTC(2100, 2, 1),
    ];
    for (let i = 0; i < 50_000; i += 1) {
      instants.push(from + Math.floor((random() * (to - from)) / 1000) * 1000);
    }
    for (const instant of instants) {
      expect(isoOfInstant(instant), String(instant)).toBe(new Date(instant).toISOString());
    }
  });

  it('leaves other instants to Date: milliseconds, and years of other than four digits', () => {
    for (const instant of [1500, Date.UTC(999, 11, 31), Date.UTC(10_000, 0, 1), -1e15]) {
      expect(isoOfInstant(instant)).toBe(new Date(instant).toISOString());
    }
  });
});
