/**
 * The per-caller token bucket in Redis, shared by every replica: N replicas allow a caller
 * `rps`/`burst` in total, not N times as much.
 *
 * One Lua script reads, refills, takes and writes the bucket atomically, on Redis's clock (the
 * replicas' clocks may differ). The bucket is a hash under `<prefix>:rl:<sha256 of the caller>`
 * (a caller is a token's subject or a client address: neither appears in clear), expiring once
 * it would be full again. When Redis fails, the request is allowed (fail open: an outage of
 * the shared counters must not become an outage of the gateway) and the failure is counted.
 */
import type { RateLimitConfig } from '../config.ts';
import { hashedKeyPart, type RedisConnection } from '../state/redis.ts';
import { TAKE_TOKEN } from '../state/scripts.ts';
import type { RateDecision, TokenBuckets } from './rate-limit.ts';

/** The Redis implementation of {@link RateLimiter}. */
export class RedisRateLimiter implements TokenBuckets {
  readonly #redis: RedisConnection;
  readonly #rps: string;
  readonly #burst: string;

  constructor(redis: RedisConnection, config: RateLimitConfig) {
    this.#redis = redis;
    this.#rps = String(config.rps);
    this.#burst = String(config.burst);
  }

  async take(key: string): Promise<RateDecision> {
    try {
      const reply = await this.#redis.script(
        TAKE_TOKEN,
        [this.#redis.key('rl', hashedKeyPart(key))],
        [this.#rps, this.#burst],
      );
      const [allowed, waitMs] = Array.isArray(reply) ? reply.map(Number) : [];
      if (allowed === undefined || waitMs === undefined) throw new Error('unexpected reply');
      if (allowed === 1) return { allowed: true, retryAfterSeconds: 0 };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    } catch {
      this.#redis.failed('rate_limit');
      return { allowed: true, retryAfterSeconds: 0 };
    }
  }
}
