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
import { hashedKeyPart, luaScript, type RedisConnection } from '../redis/connection.ts';
import type { RateDecision, TokenBuckets } from './rate-limit.ts';

// KEYS[1]: bucket. ARGV: rps, burst. Returns {allowed (0/1), ms until one token is back}.
const TAKE = luaScript(`
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1])
local at = tonumber(bucket[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) * rps / 1000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rps) + 1000)
if allowed == 1 then
  return {1, 0}
end
return {0, math.ceil((1 - tokens) * 1000 / rps)}
`);

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
        TAKE,
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
