/**
 * Structured JSON logs (pino) with redaction: credentials and personal data are replaced by
 * `[redacted]` wherever they appear under the listed paths, whatever the log line.
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import type { LogConfig } from '../config.ts';

/**
 * Paths redacted in every log line. Credentials (headers and settings), then personal data of
 * the upstream records (customer, card digits, KYC names and submitted check values).
 */
export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  '*.headers["x-secret-key"]',
  '*.headers.cookie',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'secretKey',
  '*.secretKey',
  'jwtSecret',
  '*.jwtSecret',
  'variables',
  '*.variables',
  'customer',
  '*.customer',
  'fullname',
  '*.fullname',
  'fullName',
  '*.fullName',
  'email',
  '*.email',
  'phone',
  '*.phone',
  'card',
  '*.card',
  'name',
  '*.name',
  'query',
  '*.query',
  '*.kyc[*].query',
  'userRef',
  '*.userRef',
  'sub',
  '*.sub',
];

export type { Logger };

/** Builds the gateway's logger; `destination` lets tests capture the lines. */
export function createLogger(config: LogConfig, destination?: DestinationStream): Logger {
  const options = {
    level: config.level,
    base: { service: 'payment-kyc-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS, ...config.redactPaths], censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}
