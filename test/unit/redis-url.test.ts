/**
 * The forms of `CACHE_URL` (state/redis-url.ts) and the setting that declares them: one node,
 * a cluster, TLS and ACL credentials read as written; Sentinel and malformed URLs refused with
 * a message that never holds the password.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/settings.ts';
import { parseRedisUrl, RedisUrlError } from '../../src/state/redis-url.ts';

describe('CACHE_URL forms', () => {
  it('one node: redis:// and rediss://, with an ACL user and password, kept as a URL', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toEqual({
      kind: 'node',
      url: 'redis://127.0.0.1:6379',
    });
    expect(parseRedisUrl('rediss://gateway:s3cret@redis.internal:6380/2')).toEqual({
      kind: 'node',
      url: 'rediss://gateway:s3cret@redis.internal:6380/2',
    });
  });

  it('a cluster: several nodes, TLS with rediss+cluster, credentials for every node', () => {
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001, 10.0.0.3')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: '10.0.0.3', port: 6379 },
      ],
      tls: false,
    });
    expect(
      parseRedisUrl('rediss+cluster://app%40eu:p%40ss%2Cw:rd@[::1]:7000,cfg.example.com:6379'),
    ).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '::1', port: 7000 },
        { host: 'cfg.example.com', port: 6379 },
      ],
      tls: true,
      username: 'app@eu',
      password: 'p@ss,w:rd',
    });
    expect(parseRedisUrl('redis+cluster://:only-password@h:1')).toMatchObject({
      password: 'only-password',
    });
  });

  it('refuses what it cannot read, naming the part and never the password', () => {
    const bad = [
      'http://h:1',
      'redis+cluster://',
      'redis+cluster://h:1,',
      'redis+cluster://h:99999',
      'redis+cluster://h:1/2',
      'redis+cluster://h:1?tls=true',
      'redis://h:1/?x=1',
      // Sentinel without the master's name.
      'redis+sentinel://s1:26379,s2:26379',
      // The '@' forgotten: the password sits where a host should be.
      'redis+cluster://user:hunter2-secret',
    ];
    for (const url of bad) {
      let error: unknown;
      try {
        parseRedisUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(error, url).toBeInstanceOf(RedisUrlError);
      expect((error as Error).message).not.toContain('hunter2');
    }
  });

  it('Sentinel: its sentinels (port 26379 unless told) and the master name', () => {
    expect(parseRedisUrl('rediss+sentinel://gw:pw@s1,s2:26380/my%20master')).toEqual({
      kind: 'sentinel',
      nodes: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
      tls: true,
      username: 'gw',
      password: 'pw',
      name: 'my master',
    });
  });

  it('the setting takes the cluster and Sentinel forms, and refuses a bad one with the value hidden', () => {
    for (const url of [
      'rediss+cluster://u:pw-123@a:7000,b:7000',
      'redis+sentinel://u:pw-123@s1:26379/mymaster',
    ]) {
      expect(loadConfig({ CACHE_URL: url }).cache.url).toBe(url);
    }
    let error: unknown;
    try {
      loadConfig({ CACHE_URL: 'redis+cluster://u:pw-123' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toMatch(/^CACHE_URL: has an address/);
    expect(String((error as Error).message)).not.toContain('pw-123');
  });
});
