/**
 * The KYC users of one sandbox, which the simulated interface reads (kyc.ts) and the SDK
 * stand-in's widget writes (sdk/api.ts).
 */
import type { KycCheckJson, KycUserJson } from '../src/upstream/shapes.ts';
import { demoKycUsers, emptyKycLevels, formatKycTime, type JsonObject } from './data.ts';

/** A check to record on a level; `status` defaults to `true` (passed). */
export type KycCheckInput = {
  name: string;
  status?: boolean;
  query?: JsonObject;
  result?: JsonObject;
};

/** Settings of a {@link KycStore}. */
export type KycStoreOptions = {
  /** The clock of the check timestamps; default `Date.now`. */
  now?: () => number;
  /** The initial users; default a fresh copy of the demo users. */
  users?: readonly KycUserJson[];
  /** Told after a user's checks were recorded (the provider's notification). */
  onChange?: (userRef: string) => void;
};

const LEVEL_SLUG_PATTERN = /^tier_(\d+)$/;

/**
 * The KYC users of one sandbox, in the interface's own shape. Every read and
 * write copies, so no caller can change the store (or another sandbox's) by
 * holding on to an object.
 */
export class KycStore {
  readonly #users = new Map<string, KycUserJson>();
  readonly #now: () => number;
  readonly #onChange: ((userRef: string) => void) | undefined;

  /** Creates a store holding deep copies of `options.users` (default: the demo users). */
  constructor(options: KycStoreOptions = {}) {
    this.#now = options.now ?? (() => Date.now());
    this.#onChange = options.onChange;
    for (const user of options.users ?? demoKycUsers()) {
      this.#users.set(String(user.userRef), structuredClone(user));
    }
  }

  /** A copy of the user, or `undefined` when the store does not know the userRef. */
  get(userRef: string): KycUserJson | undefined {
    const user = this.#users.get(userRef);
    return user === undefined ? undefined : structuredClone(user);
  }

  /** Whether the store knows the userRef. */
  has(userRef: string): boolean {
    return this.#users.has(userRef);
  }

  /** The userRefs the store knows, in insertion order. */
  userRefs(): string[] {
    return [...this.#users.keys()];
  }

  /**
   * Records the checks of one level of a user, as the provider does when the
   * widget's flow ends. Creates the user (levels tier_1..tier_3, none verified)
   * when unknown. The level's checks become `checks` (a check of the same name
   * as an earlier one keeps its `createdAt`); the level is verified when none
   * of them failed. The user's `level` becomes the highest level reached through
   * verified levels from tier_1 up, and `status` is true once every level is
   * verified.
   *
   * @throws RangeError when `levelSlug` is not `tier_<n>` of one of the user's levels.
   * @returns a copy of the user after the change.
   */
  recordLevel(
    userRef: string,
    levelSlug: string,
    checks: readonly KycCheckInput[],
    options: { name?: string } = {},
  ): KycUserJson {
    const number = Number(LEVEL_SLUG_PATTERN.exec(levelSlug)?.[1] ?? Number.NaN);
    const existing = this.#users.get(userRef);
    const user: KycUserJson = existing ?? {
      userRef,
      name: options.name ?? userRef,
      status: false,
      level: 0,
      levels: emptyKycLevels(),
    };
    const level = user.levels.find((l) => l.level === number && l.levelSlug === levelSlug);
    if (level === undefined) {
      throw new RangeError(`Unknown KYC level slug: ${levelSlug}`);
    }
    if (options.name !== undefined) {
      user.name = options.name;
    }
    const stamp = formatKycTime(this.#now());
    const earlier = new Map((level.kyc ?? []).map((c) => [c.name, c]));
    level.kyc = checks.map(
      (c): KycCheckJson => ({
        name: c.name,
        status: c.status ?? true,
        query: structuredClone(c.query ?? {}),
        result: structuredClone(c.result ?? {}),
        createdAt: earlier.get(c.name)?.createdAt ?? stamp,
        updatedAt: stamp,
      }),
    );
    level.status = level.kyc.every((c) => c.status);

    const ordered = [...user.levels].sort((a, b) => Number(a.level) - Number(b.level));
    let reached = 0;
    for (const l of ordered) {
      if (!l.status) {
        break;
      }
      reached = Number(l.level);
    }
    user.level = reached;
    user.status = ordered.every((l) => l.status);
    this.#users.set(userRef, user);
    this.#onChange?.(userRef);
    return structuredClone(user);
  }
}
