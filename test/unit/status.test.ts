import { describe, expect, it } from 'vitest';
import { isFinalStatus, normalizeStatus } from '../../src/model/status.ts';

const MAPPINGS = [
  ['SUCCESS', 'SUCCESSFUL'],
  ['SUCCESSFUL', 'SUCCESSFUL'],
  ['SUCCEEDED', 'SUCCESSFUL'],
  ['FAILED', 'FAILED'],
  ['FAILURE', 'FAILED'],
  ['DECLINED', 'FAILED'],
  ['PENDING', 'PENDING'],
  ['PROCESSING', 'PENDING'],
  ['INITIATED', 'PENDING'],
] as const;

function mixedCase(text: string): string {
  return [...text].map((c, i) => (i % 2 === 0 ? c.toLowerCase() : c.toUpperCase())).join('');
}

describe('normalizeStatus', () => {
  it.each(MAPPINGS)('maps %s to %s', (raw, expected) => {
    expect(normalizeStatus(raw)).toBe(expected);
  });

  it.each(MAPPINGS)('maps %s in lower and mixed case to %s', (raw, expected) => {
    expect(normalizeStatus(raw.toLowerCase())).toBe(expected);
    expect(normalizeStatus(mixedCase(raw))).toBe(expected);
    expect(normalizeStatus(raw[0] + raw.slice(1).toLowerCase())).toBe(expected);
  });

  it.each(MAPPINGS)('maps %s with surrounding space to %s', (raw, expected) => {
    expect(normalizeStatus(`  ${raw} `)).toBe(expected);
    expect(normalizeStatus(`\t${mixedCase(raw)}\n`)).toBe(expected);
  });

  it.each([
    'REVERSED',
    '',
    '   ',
    'success ful',
    'SUCCESSFULL',
    'FAIL',
    'PENDING_REVIEW',
    'null',
    'undefined',
  ])('maps %j to UNKNOWN', (raw) => {
    expect(normalizeStatus(raw)).toBe('UNKNOWN');
  });
});

describe('isFinalStatus', () => {
  it('is true for SUCCESSFUL and FAILED', () => {
    expect(isFinalStatus('SUCCESSFUL')).toBe(true);
    expect(isFinalStatus('FAILED')).toBe(true);
  });

  it('is false for PENDING and UNKNOWN', () => {
    expect(isFinalStatus('PENDING')).toBe(false);
    expect(isFinalStatus('UNKNOWN')).toBe(false);
  });

  it('agrees with normalizeStatus on raw upstream values', () => {
    expect(isFinalStatus(normalizeStatus('declined'))).toBe(true);
    expect(isFinalStatus(normalizeStatus('Succeeded'))).toBe(true);
    expect(isFinalStatus(normalizeStatus('processing'))).toBe(false);
    expect(isFinalStatus(normalizeStatus('REVERSED'))).toBe(false);
  });
});
