/** Client of the KYC interface: `GET /api/v1/user/kyc?userRef=…&slug=…` with the secret key. */

import type { KycUpstreamConfig, UpstreamPolicyConfig } from '../config.ts';
import type { Tracing } from '../observability/tracing.ts';
import { readAnswer } from './answer.ts';
import { type BreakerState, UpstreamHttp, type UpstreamObserver } from './http.ts';
import { type UpstreamKycUser, type UpstreamShapes, upstreamShapes } from './shapes.ts';

export class KycClient {
  readonly #http: UpstreamHttp;
  readonly #headers: Record<string, string>;
  readonly #slug: string;
  readonly #shapes: UpstreamShapes;

  /** `timeZone`: the IANA zone in which the record's times are read. */
  constructor(
    config: KycUpstreamConfig,
    policy: UpstreamPolicyConfig,
    observer?: UpstreamObserver,
    timeZone = 'UTC',
    tracing?: Tracing,
  ) {
    this.#http = new UpstreamHttp({
      name: 'kyc',
      baseUrl: config.baseUrl,
      policy,
      ...(observer && { observer }),
      ...(tracing && { tracing }),
    });
    this.#headers = { 'x-secret-key': config.secretKey };
    this.#slug = config.businessSlug;
    this.#shapes = upstreamShapes(timeZone);
  }

  /** The KYC details of this user of the configured business, normalized; `null` when unknown. */
  async getUser(userRef: string): Promise<UpstreamKycUser | null> {
    // The spec's first example also sends a JSON body on this GET; the consistent form is the
    // query string alone, and a body on GET is dropped by many proxies, so none is sent.
    const query = new URLSearchParams({ userRef, slug: this.#slug });
    const result = await this.#http.get(`/api/v1/user/kyc?${query.toString()}`, this.#headers);
    const answer = readAnswer('kyc', result, this.#shapes.kycResponse);
    if (answer === null) return null;
    // The reference asked by, when the upstream leaves it out of the record.
    return { ...answer.data, userRef: answer.data.userRef ?? userRef };
  }

  /** The state of this upstream's circuit breaker. */
  get breakerState(): BreakerState {
    return this.#http.breakerState;
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
