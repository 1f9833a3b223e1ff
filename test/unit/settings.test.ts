import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSettingsTable } from '../../scripts/settings-table.ts';
import {
  ConfigError,
  closeToSettings,
  editDistance,
  readSetting,
  SETTINGS,
  type SettingName,
} from '../../src/settings.ts';

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
      'CACHE_URL: must use redis, rediss, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel (got http)',
    );
    expect(read('CACHE_URL', 'not a url hunter2')).toBe(
      'CACHE_URL: must use redis, rediss, redis+cluster, rediss+cluster, redis+sentinel or rediss+sentinel (got no scheme)',
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

describe('variables one typo away from a setting', () => {
  it('measures edits, a swap of two neighbours counting as one', () => {
    expect(editDistance('CACHE_ULR', 'CACHE_URL', 2)).toBe(1);
    expect(editDistance('AUTH_JWT_SECRETS', 'AUTH_JWT_SECRET', 2)).toBe(1);
    expect(editDistance('CACHE_UR', 'CACHE_URL', 2)).toBe(1);
    expect(editDistance('KYC_API_URLS', 'KYC_API_URL', 2)).toBe(1);
    expect(editDistance('PATH', 'PORT', 3)).toBe(3);
    expect(editDistance('NODE_OPTIONS', 'NODE_ENV', 2)).toBe(3);
  });

  it('names the setting each near miss resembles', () => {
    const env = {
      CACHE_ULR: 'redis://user:hunter2@cache:6379',
      AUTH_JWT_SECRETS: 'a-secret-value',
      LOG_LEVLE: 'debug',
      PROT: '8080',
      OTEL_SERVICE_NAM: 'x',
      OTEL_EXPORTER_OTLP_ENDPIONT: 'http://127.0.0.1:4318',
    };
    expect(closeToSettings(env)).toEqual([
      { variable: 'CACHE_ULR', setting: 'CACHE_URL' },
      { variable: 'AUTH_JWT_SECRETS', setting: 'AUTH_JWT_SECRET' },
      { variable: 'LOG_LEVLE', setting: 'LOG_LEVEL' },
      { variable: 'PROT', setting: 'PORT' },
      { variable: 'OTEL_SERVICE_NAM', setting: 'OTEL_SERVICE_NAME' },
      { variable: 'OTEL_EXPORTER_OTLP_ENDPIONT', setting: 'OTEL_EXPORTER_OTLP_ENDPOINT' },
    ]);
    // Names only: no value appears in what it returns.
    expect(JSON.stringify(closeToSettings(env))).not.toMatch(/hunter2|a-secret-value|8080/);
  });

  it('raises nothing for settings themselves, or for the variables of a usual machine', () => {
    const env = Object.fromEntries(
      [
        ...Object.keys(SETTINGS),
        'PATH',
        'HOME',
        'HOSTNAME',
        'PWD',
        'USER',
        'SHELL',
        'LANG',
        'TERM',
        'TZ',
        'CI',
        'NODE_OPTIONS',
        'NODE_PATH',
        'NODE_EXTRA_CA_CERTS',
        'NODE_TLS_REJECT_UNAUTHORIZED',
        'NODE_DEBUG',
        'NODE_NO_WARNINGS',
        'NODE_V8_COVERAGE',
        'npm_config_cache',
        'npm_lifecycle_event',
        'KUBERNETES_SERVICE_HOST',
        'KUBERNETES_PORT',
        'CACHE_PORT',
        'CACHE_SERVICE_HOST',
        'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
        'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT',
        'OTEL_METRICS_EXPORTER',
        'OTEL_LOGS_EXPORTER',
        'HTTP_PROXY',
        'HTTPS_PROXY',
        'NO_PROXY',
      ].map((name) => [name, 'x']),
    );
    expect(closeToSettings(env)).toEqual([]);
  });
});
