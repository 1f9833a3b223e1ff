import { describe, expect, it } from 'vitest';
import { parseExpiry } from '../../src/model/card.ts';

describe('parseExpiry', () => {
  it('reads MM/YY with a four-digit year', () => {
    expect(parseExpiry('12/27')).toEqual({ month: 12, year: 2027 });
  });

  it('reads a one-digit month', () => {
    expect(parseExpiry('1/30')).toEqual({ month: 1, year: 2030 });
  });

  it('reads MM/YYYY', () => {
    expect(parseExpiry('09/2031')).toEqual({ month: 9, year: 2031 });
  });

  it('reads the first and last months', () => {
    expect(parseExpiry('01/25')).toEqual({ month: 1, year: 2025 });
    expect(parseExpiry('12/99')).toEqual({ month: 12, year: 2099 });
  });

  it('refuses month 13', () => {
    expect(parseExpiry('13/27')).toBeUndefined();
  });

  it('refuses month 00', () => {
    expect(parseExpiry('00/27')).toBeUndefined();
  });

  it('refuses letters', () => {
    expect(parseExpiry('ab/cd')).toBeUndefined();
  });

  it('refuses null', () => {
    expect(parseExpiry(null)).toBeUndefined();
  });

  it('refuses other shapes', () => {
    for (const text of ['', '1227', '12/2', '12/027', '12/27/01', '/27', '12/']) {
      expect(parseExpiry(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});
