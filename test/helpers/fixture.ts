/**
 * A programmable upstream on 127.0.0.1 for edge cases the sandbox does not cover: each test
 * says what to answer, and every request is recorded (method, path, query, headers, body).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FixtureRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FixtureAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer once this settles (and `delayMs` has passed). */
  until?: Promise<unknown>;
  /** Destroy the connection instead of answering. */
  reset?: boolean;
}

export type FixtureHandler = (request: FixtureRequest, index: number) => FixtureAnswer;

export interface Fixture {
  url: string;
  requests: FixtureRequest[];
  /** Replaces the handler (for "down, then back" scenarios). */
  setHandler(handler: FixtureHandler): void;
  close(): Promise<void>;
}

/** Starts a fixture upstream on a free loopback port. */
export async function startFixture(handler: FixtureHandler): Promise<Fixture> {
  let current = handler;
  const requests: FixtureRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fixture');
      const request: FixtureRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      const answer = current(request, requests.length - 1);
      const respond = (): void => {
        if (answer.reset) {
          req.socket.resetAndDestroy();
          return;
        }
        const isText = typeof answer.body === 'string';
        const body =
          answer.body === undefined ? '' : isText ? answer.body : JSON.stringify(answer.body);
        res.writeHead(answer.status ?? 200, {
          'content-type': isText ? 'text/html' : 'application/json',
          ...answer.headers,
        });
        res.end(body);
      };
      const delayed = (): void => {
        if (!answer.delayMs) {
          respond();
          return;
        }
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond();
        }, answer.delayMs);
        timers.add(timer);
      };
      if (answer.until) {
        // After close, the connection is gone: nothing to answer.
        answer.until.then(() => {
          if (!res.destroyed) delayed();
        });
      } else {
        delayed();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler: (next) => {
      current = next;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A well-formed transaction status answer with overrides of `data`. */
export function transactionBody(data: Record<string, unknown> = {}, event = 'PAYMENT_SUCCESSFUL') {
  return {
    event,
    data: {
      amount: 1000.5,
      appFee: 15.01,
      merchantFee: 5.25,
      txIsSucces: true,
      currency: 'NGN',
      checkoutPoint: 'https://shop.example.com/checkout',
      paymentRef: 'PAY-1',
      merchantRef: 'M-1',
      paymentChannel: 'Card',
      deviceFingerPrint: 'fp-1',
      message: 'Approved',
      txStatus: 'SUCCESSFUL',
      txTimestamp: 'Jan 5, 2024, 3:04:05 PM',
      customer: {
        fullname: 'Test Person',
        email: 'test@example.com',
        phone: '2348000000000',
        joinedAt: 'Mar 1, 2023, 9:00:00 AM',
      },
      card: { first: '539983', last: '8381', expiry: '09/28', cardType: 'Mastercard' },
      ...data,
    },
  };
}

/** A well-formed KYC details answer with overrides of `data`. */
export function kycBody(data: Record<string, unknown> = {}) {
  return {
    message: 'KYC details retrieved successfully',
    error: false,
    data: {
      userRef: 'user-1',
      name: 'Test Person',
      status: false,
      level: 1,
      levels: [
        {
          level: 1,
          levelName: 'Basic',
          levelSlug: 'tier_1',
          status: true,
          kyc: [
            {
              name: 'gender',
              status: true,
              query: { gender: 'male' },
              result: {},
              createdAt: '05-01-2024 15:04:05',
              updatedAt: '06-01-2024 10:00:00',
            },
          ],
        },
        { level: 2, levelName: 'Intermediate', levelSlug: 'tier_2', status: false, kyc: [] },
      ],
      ...data,
    },
  };
}

/** Answers a good KYC record for the userRef asked (an answer for another user is refused). */
export const kycByRef: FixtureHandler = (request) => ({
  body: kycBody({ userRef: request.query.get('userRef') ?? 'user-1' }),
});

/** A payment fixture whose references turn SUCCESSFUL at a time each test sets. */
export interface SettlingPayment {
  fixture: Fixture;
  /** When each reference turns SUCCESSFUL (epoch ms). */
  settleAt: Map<string, number>;
  /** How many calls the fixture received for this reference. */
  callsFor(txRef: string): number;
}

/**
 * Starts a payment fixture answering PENDING until `settleAt` says otherwise; a reference
 * without a time is settled from `unlistedSettleAt` (0: at once, Infinity: never).
 */
export async function startSettlingPayment(unlistedSettleAt: number): Promise<SettlingPayment> {
  const settleAt = new Map<string, number>();
  const fixture = await startFixture((request) => {
    const txRef = request.path.split('/').pop() ?? '';
    const settled = Date.now() >= (settleAt.get(txRef) ?? unlistedSettleAt);
    return {
      body: transactionBody({
        paymentRef: txRef,
        txStatus: settled ? 'SUCCESSFUL' : 'PENDING',
        txIsSucces: settled,
      }),
    };
  });
  return {
    fixture,
    settleAt,
    callsFor: (txRef) => fixture.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length,
  };
}
