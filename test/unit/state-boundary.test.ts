/**
 * Only src/state/ talks to Redis: no other file of the gateway imports a Redis client package,
 * and no feature imports the state's connection (only app.ts, which opens it and hands it to
 * the state). Features reach Redis through the state layer's interfaces, so that its one
 * connection, its timeouts and its "act locally and count it" rule hold on every path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = process.cwd();
const CLIENTS = ['@redis/client', 'redis', '@keyv/redis', 'ioredis', '@redis/'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|js|mts|cts)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module a file imports: static, dynamic, re-exports and require. */
function imported(text: string): string[] {
  const specifiers = [
    ...text.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...text.matchAll(/\bimport\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return specifiers.map(([, specifier]) => specifier ?? '');
}

const isRedisClient = (specifier: string): boolean =>
  CLIENTS.some((name) => specifier === name || (name.endsWith('/') && specifier.startsWith(name)));

it('no file under src/ outside src/state/ imports a Redis client package', () => {
  const offenders = sources(join(ROOT, 'src'))
    .map((path) => relative(ROOT, path))
    .filter((path) => !path.startsWith(join('src', 'state')))
    .flatMap((path) =>
      imported(readFileSync(join(ROOT, path), 'utf8'))
        .filter(isRedisClient)
        .map((specifier) => `${path} imports ${specifier}`),
    );
  expect(offenders).toEqual([]);
});

it('no feature imports the connection: outside src/state/, only app.ts opens it', () => {
  const connection = join(ROOT, 'src', 'state', 'redis.ts');
  const users = sources(join(ROOT, 'src'))
    .filter((path) => !path.startsWith(join(ROOT, 'src', 'state')))
    .filter((path) =>
      imported(readFileSync(path, 'utf8')).some(
        (specifier) =>
          specifier.startsWith('.') && resolve(dirname(path), specifier) === connection,
      ),
    )
    .map((path) => relative(ROOT, path));
  expect(users).toEqual([join('src', 'app.ts')]);
});

it('src/state/ does (the check looks where the client is)', () => {
  const inState = sources(join(ROOT, 'src', 'state')).flatMap((path) =>
    imported(readFileSync(path, 'utf8')).filter(isRedisClient),
  );
  expect(inState).toContain('@redis/client');
});

it('the check sees every form of import', () => {
  const forms = [
    "import { createClient } from '@redis/client';",
    "import type { RedisClientType } from 'redis';",
    "export * from '@keyv/redis';",
    "const r = await import('@redis/client');",
    "import '@redis/client';",
    "const r = require('ioredis');",
  ];
  for (const form of forms) expect(imported(form).some(isRedisClient), form).toBe(true);
  expect(imported("import { x } from './redis.ts';").some(isRedisClient)).toBe(false);
});
