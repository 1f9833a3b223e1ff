/**
 * The shipped compose file runs Redis so that payment claims survive: every write in the
 * append-only file before it is answered, nothing evicted, the data in a volume. Read from the
 * file as Docker Compose reads it (YAML), so an edit that drops one of these fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Compose {
  services: Record<string, { command?: string[]; volumes?: string[] }>;
  volumes?: Record<string, unknown>;
}

const compose = parse(
  readFileSync(new URL('../../deploy/compose.yaml', import.meta.url), 'utf8'),
) as Compose;

/** The value given to `--name` on a redis-server command line. */
function option(command: string[], name: string): string | undefined {
  const at = command.indexOf(`--${name}`);
  return at === -1 ? undefined : command[at + 1];
}

describe('deploy/compose.yaml keeps claims durable', () => {
  const redis = compose.services.redis;
  const command = redis?.command ?? [];

  it('runs redis-server with an append-only file fsynced on every write, and no eviction', () => {
    expect(command[0]).toBe('redis-server');
    expect(option(command, 'appendonly')).toBe('yes');
    expect(option(command, 'appendfsync')).toBe('always');
    expect(option(command, 'maxmemory-policy')).toBe('noeviction');
  });

  it('keeps /data in a named volume', () => {
    const mount = (redis?.volumes ?? []).find((volume) => volume.endsWith(':/data'));
    expect(mount).toBeDefined();
    const name = mount?.split(':')[0] ?? '';
    expect(Object.keys(compose.volumes ?? {})).toContain(name);
  });
});
