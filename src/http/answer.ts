/**
 * How a GraphQL result becomes an HTTP answer, for every transport: the media type chosen from
 * `Accept` (GraphQL over HTTP, q-values honoured), the status, the headers an error asks for,
 * and the body without the internal extensions.
 */
import type { ExecutionResult } from 'graphql';
import { publicError } from '../errors.ts';

export type AnswerType = 'application/graphql-response+json' | 'application/json';

const SERVED: readonly AnswerType[] = ['application/graphql-response+json', 'application/json'];

/** One media range of `Accept`: its type (lower case), q-value, and whether its charset is UTF-8. */
export interface AcceptRange {
  mediaRange: string;
  q: number;
  utf8: boolean;
}

/** The ranges of an `Accept` header in the order listed (a q that is not a number counts as 0). */
export function acceptRanges(accept: string): AcceptRange[] {
  return accept
    .toLowerCase()
    .split(',')
    .map((range) => {
      const [mediaRange = '', ...parameters] = range.split(';').map((part) => part.trim());
      let q = 1;
      let utf8 = true;
      for (const parameter of parameters) {
        const [name, value = ''] = parameter.split('=').map((part) => part.trim());
        if (name === 'q') q = Number.isNaN(Number(value)) ? 0 : Number(value);
        if (name === 'charset') utf8 = value.replace(/"/g, '') === 'utf-8';
      }
      return { mediaRange, q, utf8 };
    });
}

/** Whether `accept` lists `mediaRange` itself (lower case) with a q above 0. */
export function accepts(accept: string | undefined, mediaRange: string): boolean {
  return acceptRanges(accept ?? '').some((range) => range.mediaRange === mediaRange && range.q > 0);
}

/**
 * The JSON media type to answer with, or undefined when `Accept` allows neither (a stream may
 * still be acceptable). No header, or any type, means `application/json` (the spec's legacy
 * default); among acceptable ranges the highest q wins, then the earliest listed, and a range
 * with a charset other than UTF-8 or q=0 counts as not acceptable.
 */
export function negotiate(accept: string | null | undefined): AnswerType | undefined {
  if (accept === null || accept === undefined || accept.trim() === '') return 'application/json';
  let best: { type: AnswerType; q: number } | undefined;
  for (const { mediaRange, q, utf8 } of acceptRanges(accept)) {
    if (!utf8 || q <= 0) continue;
    const type = matching(mediaRange);
    if (type && (!best || q > best.q)) best = { type, q };
  }
  return best?.type;
}

function matching(mediaRange: string): AnswerType | undefined {
  if (mediaRange === '*/*' || mediaRange === 'application/*') return 'application/json';
  return SERVED.find((type) => type === mediaRange);
}

interface HttpExtension {
  status?: number;
  headers?: Record<string, string>;
  /** Set on request errors that answer 200 under `application/json` (GraphQL over HTTP). */
  spec?: boolean;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The HTTP answer of a single result: the highest status an error asks for (request errors
 * keep 200 under `application/json`), 500 for an unexpected error with no data, else 200.
 */
export function answerOf(result: ExecutionResult, type: AnswerType): Answer {
  const headers: Record<string, string> = { 'content-type': `${type}; charset=utf-8` };
  const { http: resultHttp, ...resultExtensions } = (result.extensions ?? {}) as {
    http?: HttpExtension;
  } & Record<string, unknown>;
  Object.assign(headers, resultHttp?.headers);
  let status = resultHttp?.status ?? 0;
  let unexpected = false;
  const errors = result.errors?.map((error) => {
    const { http, unexpected: flagged } = (error.extensions ?? {}) as {
      http?: HttpExtension;
      unexpected?: boolean;
    };
    if (http) {
      Object.assign(headers, http.headers);
      if (!(type === 'application/json' && http.spec) && (http.status ?? 0) > status) {
        status = http.status ?? 0;
      }
    } else if (flagged) unexpected = true;
    return publicError(error);
  });
  if (status === 0) status = unexpected && !('data' in result) ? 500 : 200;
  const body = JSON.stringify({
    ...(errors && { errors }),
    ...('data' in result && { data: result.data }),
    ...(Object.keys(resultExtensions).length > 0 && { extensions: resultExtensions }),
  });
  return { status, headers, body };
}
