/**
 * The businesses a running gateway serves, by id: what the operation entry resolves a token's
 * business claim to, and what a webhook path names. With one business (no `BUSINESSES_FILE`)
 * every token is that business's, whatever it claims; with several, a token must name one.
 *
 * `replace` applies a new list (a reload): a business that is new is built; one whose account
 * changed is updated in place (its upstream clients, public values and webhook secret are the new
 * ones from the next call on, and its open streams go on); one that is gone is removed: its
 * `removed` signal aborts (the operation entry ends its streams and refuses its tokens) and what
 * it holds is closed. Other businesses are not touched.
 */
import type { ContextDeps } from '../context.ts';
import type { WebhookHandler } from '../webhooks/handler.ts';
import { type BusinessAccount, sameAccount } from './accounts.ts';

/** The id of the one business of a gateway without `BUSINESSES_FILE`. */
export const SINGLE_BUSINESS_ID = 'default';

/** One business, as a request sees it. */
export interface Business {
  readonly id: string;
  /** What a request of this business reads through (its records, live status, claims). */
  readonly context: ContextDeps;
  /** Its notifications' handler; undefined when it has no webhook secret (its paths 404). */
  readonly webhooks: WebhookHandler | undefined;
  /** Aborted when the business is no longer served (a reload removed it). */
  readonly removed: AbortSignal;
}

/** A business as the registry holds it: built from an account, updated, closed. */
export interface BusinessRuntime extends Business {
  update(account: BusinessAccount): void;
  /**
   * Closes what it holds; `removed` (a reload removed it) first aborts its `removed` signal, which
   * ends its streams with an error (at the gateway's end, the shutdown ends streams its own way).
   */
  close(removed: boolean): Promise<void>;
}

/** What a reload did, by business id. */
export interface ReloadReport {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
}

export class Businesses {
  readonly #build: (account: BusinessAccount) => BusinessRuntime;
  readonly #runtimes = new Map<string, { account: BusinessAccount; runtime: BusinessRuntime }>();
  /** True when tokens name their business (several may be served). */
  readonly several: boolean;
  /** The one business, without a businesses file (until the gateway closes). */
  #single: BusinessRuntime | undefined;

  constructor(
    accounts: readonly BusinessAccount[],
    several: boolean,
    build: (account: BusinessAccount) => BusinessRuntime,
  ) {
    if (!several && accounts.length !== 1) {
      throw new Error('one business without a businesses file');
    }
    this.several = several;
    this.#build = build;
    for (const account of accounts) {
      this.#runtimes.set(account.id, { account, runtime: build(account) });
    }
    this.#single = several ? undefined : this.#runtimes.values().next().value?.runtime;
  }

  /**
   * The business a verified token names by its claim; undefined when none of those served now
   * (no claim, or an unknown id). With one business, that one, whatever the token claims.
   */
  resolve(claim: string | undefined): Business | undefined {
    if (!this.several) return this.#single;
    return claim === undefined ? undefined : this.#runtimes.get(claim)?.runtime;
  }

  /** The business of `id`, when served. */
  get(id: string): Business | undefined {
    return this.#runtimes.get(id)?.runtime;
  }

  /** Every business served now. */
  all(): Business[] {
    return [...this.#runtimes.values()].map(({ runtime }) => runtime);
  }

  /** The ids served now (the bound of the `business` metric label). */
  ids(): string[] {
    return [...this.#runtimes.keys()];
  }

  /** Serves `accounts` from now on (see the module's comment). */
  async replace(accounts: readonly BusinessAccount[]): Promise<ReloadReport> {
    if (!this.several) throw new Error('one business without a businesses file');
    const report: ReloadReport = { added: [], changed: [], removed: [], unchanged: 0 };
    const next = new Map(accounts.map((account) => [account.id, account]));
    const closing: Promise<void>[] = [];
    for (const [id, held] of this.#runtimes) {
      if (next.has(id)) continue;
      this.#runtimes.delete(id);
      report.removed.push(id);
      closing.push(held.runtime.close(true));
    }
    for (const account of accounts) {
      const held = this.#runtimes.get(account.id);
      if (!held) {
        this.#runtimes.set(account.id, { account, runtime: this.#build(account) });
        report.added.push(account.id);
      } else if (!sameAccount(held.account, account)) {
        held.runtime.update(account);
        held.account = account;
        report.changed.push(account.id);
      } else {
        report.unchanged += 1;
      }
    }
    await Promise.allSettled(closing);
    return report;
  }

  /** Closes every business (the gateway's end). */
  async close(): Promise<void> {
    const all = [...this.#runtimes.values()];
    this.#runtimes.clear();
    this.#single = undefined;
    await Promise.allSettled(all.map(({ runtime }) => runtime.close(false)));
  }
}
