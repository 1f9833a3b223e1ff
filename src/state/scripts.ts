/**
 * Every Lua script the gateway runs on Redis, each with its contract: the keys it touches
 * (KEYS), its arguments (ARGV) and its reply. A script runs atomically on one Redis (or on the
 * one cluster node that holds its keys); no other command slips between its reads and writes.
 *
 * On a Redis Cluster every key a script touches (and the channel it publishes on) must be in one
 * hash slot: the callers name them with one shared hash tag, the part in `{…}` (`{name}` of a
 * lease and its flag, `{<txRef>}` of a live poller, `{apq}` of the persisted documents,
 * `{confirm:v2}` of the claims and their ledger).
 *
 * Times that must agree across replicas are read from Redis's own clock (`NOW` below): the
 * replicas' clocks may differ.
 */
import { createHash } from 'node:crypto';

/** A Lua script with its SHA1, for {@link RedisConnection.script} (EVALSHA, then EVAL). */
export interface LuaScript {
  source: string;
  sha: string;
}

/** Prepares a Lua script for {@link RedisConnection.script}. */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Sets the local `now` to Redis's clock, in milliseconds. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// ---------------------------------------------------------------------------------------------
// Leases (one lock protocol: SET NX PX to take, these to give back)

/**
 * KEYS: the lease. ARGV: the holder's token. Deletes the lease only while it is still the
 * holder's (after a slow holder it may belong to another). Reply: 1 deleted, 0 not held.
 */
export const RELEASE_LEASE = luaScript(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
);

/**
 * KEYS: the lease. ARGV: the holder's token, hold ms. Holds the lease `hold` more while it is
 * still the holder's (one that lapsed and was taken by another is not taken back). Reply: 1
 * renewed, 0 not held.
 */
export const RENEW_LEASE = luaScript(
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0",
);

/**
 * KEYS: the lease, its "asked again" flag. ARGV: the holder's token, hold ms. Lets go of the
 * lease unless someone asked again meanwhile (the flag is set): then the lease is kept for
 * another hold. Reply: 1 released (or no longer held), 0 asked again and kept.
 */
export const RELEASE_UNLESS_ASKED = luaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 1 end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`);

// ---------------------------------------------------------------------------------------------
// Versioned records (state/records.ts)

/**
 * KEYS: the record. ARGV: the value (starting with its order in clear, `m:<fetchedAt>|`),
 * fetchedAt, ttl ms. Writes unless the stored record's read began later. Reply: 1 written, else
 * the stored value (which the caller checks: an order that does not authenticate is no order).
 */
export const WRITE_IF_NEWER = luaScript(`
local stored = redis.call('GET', KEYS[1])
if stored then
  local at = string.match(stored, '^m:(%d+)')
  if at and tonumber(at) > tonumber(ARGV[2]) then return stored end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`);

/**
 * KEYS: the record. ARGV: the value expected, the value to write, ttl ms. Compare-and-swap: a
 * value that did not open is replaced unless another write came first. Reply: 1 written, 0 the
 * value had changed.
 */
export const REPLACE_IF_SAME = luaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

// ---------------------------------------------------------------------------------------------
// Quotas

/**
 * A token bucket on Redis's clock. KEYS: the bucket (a hash: tokens, at). ARGV: rps, burst.
 * Refills, takes one token when there is one, and lets the bucket expire once it would be full
 * again. Reply: {allowed (0/1), ms until one token is back}.
 */
export const TAKE_TOKEN = luaScript(`${NOW}local rps = tonumber(ARGV[1])
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

/**
 * A fixed-window counter. KEYS: the counter. ARGV: window ms, most per window. The window starts
 * with its first count. Reply: 1 allowed, 0 over the most.
 */
export const COUNT_IN_WINDOW = luaScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then return 0 end
return 1
`);

// ---------------------------------------------------------------------------------------------
// Expiring sorted sets: a member lapses at its score (an expiry on Redis's clock)

/**
 * KEYS: the set. ARGV: most members, member, ttl ms. Drops lapsed members and adds `member`
 * until now + ttl when fewer than `most` are left. Reply: 1 added, 0 full.
 */
export const TAKE_SLOT = luaScript(`${NOW}redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`);

/**
 * KEYS: the set. ARGV: member, ttl ms. Moves an existing member's expiry to now + ttl (a member
 * already gone stays gone). Reply: 1.
 */
export const RENEW_SLOT =
  luaScript(`${NOW}redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`);

// ---------------------------------------------------------------------------------------------
// Persisted documents (state/documents.ts)

/**
 * KEYS: the document, the LRU set (member: hash, score: last use), the bytes counter, all three
 * under one hash tag. ARGV: stored text, now (ms), most bytes, hash, prefix of document keys (the
 * documents it evicts are named from it: the same hash tag), replace (1: the stored value
 * does not open). Stores the document (no TTL: Redis never evicts it, this script does), marks it
 * used, and drops the least recently used documents, and only documents, while over the byte
 * bound. Reply: 1 stored, 2 known already, 0 larger than the bound alone.
 */
export const REGISTER_DOCUMENT = luaScript(`
local size = string.len(ARGV[1])
local most = tonumber(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then
  if ARGV[6] ~= '1' then
    redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
    return 2
  end
  redis.call('DECRBY', KEYS[3], redis.call('STRLEN', KEYS[1]))
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[4])
end
if size > most then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
local total = redis.call('INCRBY', KEYS[3], size)
while total > most do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 then
    redis.call('SET', KEYS[3], 0)
    break
  end
  local victim = ARGV[5] .. oldest[1]
  local freed = redis.call('STRLEN', victim)
  redis.call('DEL', victim)
  redis.call('ZREM', KEYS[2], oldest[1])
  total = redis.call('DECRBY', KEYS[3], freed)
end
return 1
`);

// ---------------------------------------------------------------------------------------------
// Payment confirmation claims (state/claims.ts)

/**
 * The ledger's check, the head of every claims script. KEYS[1]: the marker. ARGV[1]: the marker
 * this replica saw ('' for none yet), ARGV[2]: a new marker (`e:<random>`), ARGV[3]: the lost
 * marker (`lost:<when>`). A replica that saw none adopts what it finds (creating the marker when
 * there is none); one that saw a marker and finds it gone or replaced marks the ledger lost; an
 * acknowledged marker (`a:…`, written by `npm run claims:acknowledge`) is adopted by everyone.
 * Leaves `marker`: the marker now, `lost:…` when the claims cannot be trusted.
 */
const LEDGER = `local marker = redis.call('GET', KEYS[1])
if not marker then
  if ARGV[1] == '' then marker = ARGV[2] else marker = ARGV[3] end
  redis.call('SET', KEYS[1], marker)
elseif string.sub(marker, 1, 5) ~= 'lost:' and ARGV[1] ~= '' and marker ~= ARGV[1]
  and string.sub(marker, 1, 2) ~= 'a:' then
  marker = ARGV[3]
  redis.call('SET', KEYS[1], marker)
end
`;

/** The ledger alone (at start and at every reconnection). Reply: `{ marker }`. */
export const CHECK_LEDGER = luaScript(`${LEDGER}return {marker}`);

/**
 * The claim, atomically with the ledger's check. KEYS[2]: the claim; ARGV[4]: the new value,
 * ARGV[5]: its retention (ms). Reply: `{ marker, held }`, where `held` is the value held when
 * there is one; else the new value is set and `held` is absent. Nothing is claimed in a lost
 * ledger.
 */
export const CLAIM =
  luaScript(`${LEDGER}if string.sub(marker, 1, 5) == 'lost:' then return {marker} end
local held = redis.call('GET', KEYS[2])
if held then return {marker, held} end
redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[5])
return {marker}`);

/** The claim held (KEYS[2]), read with the ledger's check. Reply: `{ marker, held }`. */
export const READ_CLAIM = luaScript(`${LEDGER}local held = redis.call('GET', KEYS[2])
if held then return {marker, held} end
return {marker}`);

// ---------------------------------------------------------------------------------------------
// graphql-sse reservations shared between replicas (state/sse-reservations.ts); KEYS[1] the
// reservation and KEYS[2] its holder share one hash tag

/**
 * KEYS: reservation, holder. ARGV: replica, lease ms. Makes the replica the holder of a
 * reservation that exists and has none, and keeps the reservation for the lease. Reply: 1
 * claimed; 0 held already; -1 gone.
 */
export const SSE_CLAIM = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

/**
 * KEYS: reservation, holder. ARGV: replica, lease ms. Keeps both for the lease while the replica
 * holds it. Reply: 1 renewed, 0 not held.
 */
export const SSE_RENEW = luaScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`);

/**
 * KEYS: reservation, holder. ARGV: the replica that may drop it (its holder, or the holder
 * found dead). Deletes both unless another replica holds it. Reply: keys deleted (0: held by
 * another).
 */
export const SSE_DROP = luaScript(`
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1], KEYS[2])
`);
