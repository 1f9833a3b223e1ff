import { describe, expect, it } from 'vitest';
import { toCents } from '../../src/model/money.ts';

describe('toCents', () => {
  it('rounds 1.005 up on its decimal digits (Math.round would give 1)', () => {
    expect(toCents(1.005)).toBe(1.01);
  });

  it('rounds 2.675 to 2.68 (toFixed would give 2.67)', () => {
    expect(toCents(2.675)).toBe(2.68);
  });

  it('turns 0.1 + 0.2 into 0.3', () => {
    expect(toCents(0.1 + 0.2)).toBe(0.3);
  });

  it('keeps 15000.5', () => {
    expect(toCents(15000.5)).toBe(15000.5);
  });

  it('rounds negative amounts half away from zero', () => {
    expect(toCents(-1.005)).toBe(-1.01);
    expect(toCents(-2.675)).toBe(-2.68);
    expect(toCents(-19.99)).toBe(-19.99);
  });

  it('keeps a huge amount finite and unchanged (it has no cents to round)', () => {
    const value = toCents(1e21);
    expect(Number.isFinite(value)).toBe(true);
    expect(value).toBe(1e21);
  });

  it('keeps zero', () => {
    expect(toCents(0)).toBe(0);
  });

  it('keeps amounts that already are whole cents', () => {
    expect(toCents(19.99)).toBe(19.99);
    expect(toCents(100)).toBe(100);
    expect(toCents(0.01)).toBe(0.01);
  });

  it('rounds down below half a cent', () => {
    expect(toCents(225.014)).toBe(225.01);
    expect(toCents(1.0049999)).toBe(1);
  });

  it('rounds half a cent up', () => {
    expect(toCents(0.005)).toBe(0.01);
    expect(toCents(0.015)).toBe(0.02);
  });

  it('rounds a tiny amount in exponent notation to zero', () => {
    expect(toCents(1e-7)).toBe(0);
  });
});
