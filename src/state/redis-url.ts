/**
 * The forms of `CACHE_URL`, read once: which Redis deployment the gateway talks to and how.
 *
 * - `redis://[user:password@]host[:port][/db]`: one Redis node (`rediss://` for TLS).
 * - `redis+cluster://[user:password@]host:port,host:port,…`: a Redis Cluster, given by one or
 *   more of its nodes (the client discovers the others from them; give at least two, so that one
 *   node down at start does not keep the gateway away). `rediss+cluster://` for TLS. The user and
 *   password (Redis ACL, or `AUTH` with a password alone) apply to every node.
 * - `redis+sentinel://[user:password@]host:port,host:port,…/<master name>`: Redis Sentinel, given
 *   by one or more sentinels and the name of the master they watch; the gateway talks to the
 *   master they name, and follows a failover. `rediss+sentinel://` for TLS to the Redis nodes.
 *   The user and password are the Redis nodes'; the sentinels are asked without credentials.
 *
 * Errors name the part that is wrong, never the password.
 */

/** One address of a node or sentinel. */
export interface RedisAddress {
  host: string;
  port: number;
}

/** What `CACHE_URL` designates. */
export type RedisTarget =
  | { kind: 'node'; url: string }
  | {
      kind: 'cluster' | 'sentinel';
      nodes: RedisAddress[];
      tls: boolean;
      username?: string;
      password?: string;
      /** The master's name (sentinel only). */
      name?: string;
    };

/** `CACHE_URL` is not one of the accepted forms; the message never holds the password. */
export class RedisUrlError extends Error {}

const DEFAULT_PORT = { cluster: 6379, sentinel: 26379 } as const;

function address(text: string, index: number, kind: 'cluster' | 'sentinel'): RedisAddress {
  // host, host:port, [v6], [v6]:port
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(text);
  const port = match?.[2] === undefined ? DEFAULT_PORT[kind] : Number(match[2]);
  if (!match?.[1] || port < 1 || port > 65_535) {
    // Not the text: a URL whose '@' is missing has its password there.
    throw new RedisUrlError(`has an address that is not host:port (the ${ordinal(index)})`);
  }
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

function ordinal(index: number): string {
  return ['first', 'second', 'third'][index] ?? `${index + 1}th`;
}

/** Reads `CACHE_URL`; throws {@link RedisUrlError} on a form it does not accept. */
export function parseRedisUrl(value: string): RedisTarget {
  const scheme = /^([a-z+]+):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new RedisUrlError('must be a URL such as redis://host:6379');
    }
    if (parsed.search || parsed.hash) {
      throw new RedisUrlError('must not carry a query string or fragment');
    }
    if (parsed.hostname === '') throw new RedisUrlError('must name a host');
    return { kind: 'node', url: parsed.href.replace(/\/+$/, '') };
  }
  const form = /^(rediss?)\+(cluster|sentinel)$/.exec(scheme ?? '');
  if (!form?.[1] || !form[2]) {
    throw new RedisUrlError(
      `must use redis, rediss, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel (got ${scheme ?? 'no scheme'})`,
    );
  }
  const kind = form[2] === 'cluster' ? 'cluster' : 'sentinel';
  const rest = value.slice(`${scheme}://`.length);
  if (/[?#]/.test(rest)) throw new RedisUrlError('must not carry a query string or fragment');
  // The credentials end at the last '@' (a password may hold '@' only percent-encoded, as in
  // any URL; the last one is where the hosts begin either way).
  const at = rest.lastIndexOf('@');
  const credentials = at < 0 ? undefined : rest.slice(0, at);
  const [hosts = '', ...path] = rest.slice(at + 1).split('/');
  const name = path.join('/');
  if (kind === 'cluster' && name !== '') {
    throw new RedisUrlError('a cluster URL takes no path (a cluster has database 0 only)');
  }
  if (kind === 'sentinel' && name === '') {
    throw new RedisUrlError("a sentinel URL ends with the master's name (…/mymaster)");
  }
  const nodes = hosts.split(',').map((text, index) => address(text.trim(), index, kind));
  let username: string | undefined;
  let password: string | undefined;
  if (credentials !== undefined) {
    const colon = credentials.indexOf(':');
    try {
      const user = decodeURIComponent(colon < 0 ? credentials : credentials.slice(0, colon));
      const secret = colon < 0 ? '' : decodeURIComponent(credentials.slice(colon + 1));
      if (user !== '') username = user;
      if (secret !== '') password = secret;
    } catch {
      throw new RedisUrlError('has credentials that are not percent-encoded correctly');
    }
  }
  return {
    kind,
    nodes,
    tls: form[1] === 'rediss',
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
    ...(kind === 'sentinel' && { name: decodeURIComponent(name) }),
  };
}
