/**
 * The sandbox pushes, as payment and identity providers do: once told where the gateway is
 * (`Sandbox.sendWebhooksTo`), it signs a notification with the gateway's `WEBHOOK_SECRET` and
 * POSTs it to `/webhooks/payment` when a pending payment settles and to `/webhooks/kyc` when a
 * user's KYC checks are recorded. The notification names the record (plus an event id and
 * name, as providers send them: two notifications are never the same bytes, which the gateway
 * would take for a replay); the gateway fetches the record itself.
 */
import { randomBytes } from 'node:crypto';
import { signWebhook } from '../src/webhooks/signature.ts';

/** Most settlements waiting to be announced at once (a soak run makes many pending payments). */
const MAX_SCHEDULED = 10_000;

export interface WebhookTarget {
  /** The gateway's base address, e.g. `http://127.0.0.1:4000`. */
  baseUrl: string;
  secret: string;
}

/** Sends the sandbox's notifications, once a target is set; until then, nothing. */
export class SandboxWebhooks {
  #target: WebhookTarget | undefined;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inFlight = new Set<AbortController>();
  /** How many notifications were sent and how the gateway answered (for tests and the console). */
  readonly sent: { path: string; status: number | 'failed' }[] = [];

  /** Sends from now on to `target`. */
  sendTo(target: WebhookTarget): void {
    this.#target = target;
  }

  /** A pending payment settles at `at` (epoch ms): announce it then. */
  settlesAt(txRef: string, at: number, now: number): void {
    if (!this.#target || this.#timers.size >= MAX_SCHEDULED) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        void this.#send('/webhooks/payment', { event: 'PAYMENT_SUCCESSFUL', data: { txRef } });
      },
      // A little after: the payment interface answers SUCCESSFUL from that instant on.
      Math.max(0, at - now) + 10,
    );
    timer.unref();
    this.#timers.add(timer);
  }

  /** A user's KYC checks were recorded. */
  kycChanged(userRef: string): void {
    if (!this.#target) return;
    void this.#send('/webhooks/kyc', { event: 'KYC_UPDATED', data: { userRef } });
  }

  async #send(path: string, payload: object): Promise<void> {
    const target = this.#target;
    if (!target) return;
    const body = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, ...payload });
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), 5000);
    try {
      const response = await fetch(`${target.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-webhook-signature': signWebhook(body, target.secret),
        },
        body,
        signal: controller.signal,
      });
      await response.arrayBuffer();
      this.#record(path, response.status);
    } catch {
      // The gateway is not there (any more): a provider would retry later; the sandbox does not.
      this.#record(path, 'failed');
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
    }
  }

  #record(path: string, status: number | 'failed'): void {
    if (this.sent.length >= 1000) this.sent.shift();
    this.sent.push({ path, status });
  }

  /** Drops the scheduled notifications and those under way. */
  close(): void {
    this.#target = undefined;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
  }
}
