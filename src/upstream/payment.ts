/** Client of the payment interface: `GET /pg/api/v1/transaction/status/{txRef}` with the access token. */

import type { PaymentUpstreamConfig, UpstreamPolicyConfig } from '../config.ts';
import type { Tracing } from '../observability/tracing.ts';
import { readAnswer } from './answer.ts';
import { type BreakerState, UpstreamHttp, type UpstreamObserver } from './http.ts';
import {
  moneySourceReviver,
  type UpstreamShapes,
  type UpstreamTransaction,
  upstreamShapes,
} from './shapes.ts';

/** The form of a transaction reference: `NT-` followed by letters and digits. */
export const TX_REF = /^NT-[A-Za-z0-9]{1,64}$/;

export class PaymentClient {
  readonly #http: UpstreamHttp;
  readonly #headers: Record<string, string>;
  readonly #shapes: UpstreamShapes;

  /** `timeZone`: the IANA zone in which the record's times are read. */
  constructor(
    config: PaymentUpstreamConfig,
    policy: UpstreamPolicyConfig,
    observer?: UpstreamObserver,
    timeZone = 'UTC',
    tracing?: Tracing,
  ) {
    this.#http = new UpstreamHttp({
      name: 'payment',
      baseUrl: config.baseUrl,
      policy,
      ...(observer && { observer }),
      ...(tracing && { tracing }),
    });
    this.#headers = { authorization: `Bearer ${config.accessToken}` };
    this.#shapes = upstreamShapes(timeZone);
  }

  /**
   * The transaction with this reference, normalized, `null` when the payment service does not
   * know it. The caller has checked the reference against TX_REF.
   */
  async getTransaction(txRef: string): Promise<UpstreamTransaction | null> {
    const result = await this.#http.get(
      `/pg/api/v1/transaction/status/${encodeURIComponent(txRef)}`,
      this.#headers,
    );
    const answer = readAnswer(
      'payment',
      result,
      this.#shapes.transactionResponse,
      moneySourceReviver,
    );
    if (answer === null) return null;
    return { txRef, event: answer.event, ...answer.data };
  }

  /** The state of this upstream's circuit breaker. */
  get breakerState(): BreakerState {
    return this.#http.breakerState;
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
