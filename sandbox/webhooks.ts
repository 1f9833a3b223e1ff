/**
 * The sandbox pushes, as payment and identity providers do: once told where the gateway is
 * (`Sandbox.sendWebhooksTo`), it signs a notification with the gateway's webhook secret and
 * POSTs it to `/webhooks/payment` when a pending payment settles and to `/webhooks/kyc` when a
 * user's KYC checks are recorded (with several businesses, to `/webhooks/payment/{id}` and
 * `/webhooks/kyc/{id}`, signed with that business's secret). The notification names the
 * record (plus an event id and name, as providers send them: two notifications are never the
 * same bytes, which the gateway would take for a replay); the gateway fetches the record
 * itself.
 */
import { randomBytes } from 'node:crypto';
import { signWebhook } from '../src/webhooks/signature.ts';

/** Most settlements waiting to be announced at once (a soak run makes many pending payments). */
const MAX_SCHEDULED = 10_000;

/**
 * Where the sandbox sends its notifications. `secret`: a gateway serving one business, which
 * receives the first business's notifications on `/webhooks/payment` and `/webhooks/kyc`.
 * `businesses` (a sandbox serving several): a gateway serving several, which receives a
 * business's notifications on `/webhooks/payment/{id}` and `/webhooks/kyc/{id}`, signed with
 * that business's secret; a business without an entry is sent nothing.
 */
export type WebhookTarget =
  | {
      /** The gateway's base address, e.g. `http://127.0.0.1:4000`. */
      baseUrl: string;
      secret: string;
    }
  | {
      /** The gateway's base address, e.g. `http://127.0.0.1:4000`. */
      baseUrl: string;
      /** Business id → that business's webhook secret. */
      businesses: Readonly<Record<string, string>>;
    };

/** One notification sent, and how the gateway answered. */
export type SentWebhook = {
  path: string;
  status: number | 'failed';
  /** The business the notification was about (only in a sandbox serving several). */
  business?: string;
};

type Kind = 'payment' | 'kyc';

/** Sends the sandbox's notifications, once a target is set; until then, nothing. */
export class SandboxWebhooks {
  #target: WebhookTarget | undefined;
  readonly #first: string;
  readonly #ids: ReadonlySet<string> | undefined;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inFlight = new Set<AbortController>();
  /** How many notifications were sent and how the gateway answered (for tests and the console). */
  readonly sent: SentWebhook[] = [];

  /**
   * `businesses`: the ids of a sandbox serving several businesses, the first one first;
   * absent for a sandbox serving one (whose notifications are about the business `''`).
   */
  constructor(businesses?: readonly string[]) {
    this.#ids = businesses === undefined ? undefined : new Set(businesses);
    this.#first = businesses?.[0] ?? '';
  }

  /**
   * Sends from now on to `target`.
   * @throws TypeError when the target names no secret, an empty one, or a business this
   * sandbox does not serve (the per-business form needs a sandbox serving several).
   */
  sendTo(target: WebhookTarget): void {
    if ('businesses' in target) {
      if (this.#ids === undefined) {
        throw new TypeError(
          'sendWebhooksTo: this sandbox serves one business; give `secret`, not `businesses`',
        );
      }
      for (const [id, secret] of Object.entries(target.businesses)) {
        if (!this.#ids.has(id)) {
          throw new TypeError(`sendWebhooksTo: the sandbox serves no business "${id}"`);
        }
        if (typeof secret !== 'string' || secret === '') {
          throw new TypeError(`sendWebhooksTo: the secret of business "${id}" is empty`);
        }
      }
    } else if (typeof target.secret !== 'string' || target.secret === '') {
      throw new TypeError('sendWebhooksTo: the secret is empty');
    }
    this.#target = target;
  }

  /** A pending payment of `business` settles at `at` (epoch ms): announce it then. */
  settlesAt(business: string, txRef: string, at: number, now: number): void {
    if (!this.#route(business, 'payment') || this.#timers.size >= MAX_SCHEDULED) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        void this.#send(business, 'payment', { event: 'PAYMENT_SUCCESSFUL', data: { txRef } });
      },
      // A little after: the payment interface answers SUCCESSFUL from that instant on.
      Math.max(0, at - now) + 10,
    );
    timer.unref();
    this.#timers.add(timer);
  }

  /** A user's KYC checks were recorded under `business`. */
  kycChanged(business: string, userRef: string): void {
    if (!this.#route(business, 'kyc')) return;
    void this.#send(business, 'kyc', { event: 'KYC_UPDATED', data: { userRef } });
  }

  /** Where a notification of `business` goes, and its secret; undefined when nowhere. */
  #route(business: string, kind: Kind): { url: string; path: string; secret: string } | undefined {
    const target = this.#target;
    if (!target) return undefined;
    if ('businesses' in target) {
      const secret = Object.hasOwn(target.businesses, business)
        ? target.businesses[business]
        : undefined;
      if (secret === undefined) return undefined;
      const path = `/webhooks/${kind}/${encodeURIComponent(business)}`;
      return { url: `${target.baseUrl}${path}`, path, secret };
    }
    if (business !== this.#first) return undefined;
    const path = `/webhooks/${kind}`;
    return { url: `${target.baseUrl}${path}`, path, secret: target.secret };
  }

  async #send(business: string, kind: Kind, payload: object): Promise<void> {
    const route = this.#route(business, kind);
    if (!route) return;
    const body = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, ...payload });
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), 5000);
    try {
      const response = await fetch(route.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-signature': signWebhook(body, route.secret),
        },
        body,
        signal: controller.signal,
      });
      await response.arrayBuffer();
      this.#record(business, route.path, response.status);
    } catch {
      // The gateway is not there (any more): a provider would retry later; the sandbox does not.
      this.#record(business, route.path, 'failed');
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
    }
  }

  #record(business: string, path: string, status: number | 'failed'): void {
    if (this.sent.length >= 1000) this.sent.shift();
    this.sent.push(this.#ids === undefined ? { path, status } : { path, status, business });
  }

  /** Drops the scheduled notifications and those under way. */
  close(): void {
    this.#target = undefined;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
  }
}
