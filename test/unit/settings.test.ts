import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSettingsTable } from '../../scripts/settings-table.ts';
import { ConfigError, readSetting, SETTINGS, type SettingName } from '../../src/settings.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The TypeScript sources under `dir`, except the declarations themselves. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.includes('generated'))
    .filter((file) => join(dir, file) !== join('src', 'settings.ts'))
    .map((file) => readFileSync(join(ROOT, dir, file), 'utf8'));
}

describe('settings, declared once', () => {
  it('docs/api.md holds the table the declarations make (run npm run docs:settings)', () => {
    const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    expect(withSettingsTable(doc)).toBe(doc);
  });

  it('every declared variable is read somewhere, and the environment only through them', () => {
    const code = [...sources('src'), ...sources('sandbox')].join('\n');
    // Read through readSetting, or through a reader of config.ts that passes the name on.
    const unread = Object.keys(SETTINGS).filter((name) => !code.includes(`(env, '${name}'`));
    expect(unread).toEqual([]);
    // process.env is handed to config.ts by the two entry points, and read nowhere else.
    const readers = [...sources('src'), ...sources('sandbox')].filter((text) =>
      /process\.env(\.|\[)/.test(text),
    );
    expect(readers).toEqual([]);
  });

  it('names the variable and hides the value of a secret in its one-line error', () => {
    const read = (name: SettingName, value: string) => {
      try {
        readSetting({ [name]: value }, name);
      } catch (error) {
        return error instanceof ConfigError ? error.message : String(error);
      }
      return 'accepted';
    };
    expect(read('PORT', 'x')).toBe('PORT: must be a whole number (got "x")');
    expect(read('PORT', '70000')).toBe('PORT: must be from 0 to 65535 (got 70000)');
    expect(read('CACHE_URL', 'http://user:hunter2@x')).toBe(
      'CACHE_URL: must use redis or rediss (got http)',
    );
    expect(read('CACHE_URL', 'not a url hunter2')).toBe(
      'CACHE_URL: must be an absolute URL (got (value hidden))',
    );
    expect(read('AUTH_JWT_SECRET', 'short-hunter2')).toBe(
      'AUTH_JWT_SECRET: must be at least 32 bytes long for HS256',
    );
    expect(read('LOG_LEVEL', 'LOUD')).toBe(
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "LOUD")',
    );
  });

  it('gives the default when a variable is unset or blank', () => {
    expect(readSetting({}, 'PORT')).toBe(4000);
    expect(readSetting({ PORT: '   ' }, 'PORT')).toBe(4000);
    expect(readSetting({}, 'PAYMENT_API_URL')).toBeUndefined();
    expect(readSetting({ GRAPHIQL: 'off' }, 'GRAPHIQL')).toBe(false);
  });
});
