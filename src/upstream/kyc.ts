/** Client of the KYC interface: `GET /api/v1/user/kyc?userRef=…&slug=…` (spec 4.2). */
import type { KycUpstreamConfig, UpstreamPolicyConfig } from '../config.ts';
import { readAnswer } from './answer.ts';
import { type BreakerState, UpstreamHttp, type UpstreamObserver } from './http.ts';
import { kycResponseShape, type UpstreamKycUser } from './shapes.ts';

export class KycClient {
  readonly #http: UpstreamHttp;
  readonly #headers: Record<string, string>;
  readonly #slug: string;

  constructor(
    config: KycUpstreamConfig,
    policy: UpstreamPolicyConfig,
    observer?: UpstreamObserver,
  ) {
    this.#http = new UpstreamHttp({
      name: 'kyc',
      baseUrl: config.baseUrl,
      policy,
      ...(observer && { observer }),
    });
    this.#headers = { 'x-secret-key': config.secretKey };
    this.#slug = config.businessSlug;
  }

  /** The KYC details of this user of the configured business, `null` when unknown. */
  async getUser(userRef: string): Promise<UpstreamKycUser | null> {
    // The spec's first example also sends a JSON body on this GET; the consistent form is the
    // query string alone, and a body on GET is dropped by many proxies, so none is sent.
    const query = new URLSearchParams({ userRef, slug: this.#slug });
    const result = await this.#http.get(`/api/v1/user/kyc?${query.toString()}`, this.#headers);
    const answer = readAnswer('kyc', result, kycResponseShape);
    if (answer === null) return null;
    return { ...answer.data, requestedUserRef: userRef };
  }

  /** The state of this upstream's circuit breaker. */
  get breakerState(): BreakerState {
    return this.#http.breakerState;
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
