/**
 * `npm run claims:acknowledge`: an operator's word that `confirmPayment` may confirm again after
 * the gateway found its claims ledger lost (the Redis of `CACHE_URL` was emptied or replaced
 * while it ran). Reads the same settings as the gateway (`CACHE_URL`, `CACHE_KEY_PREFIX`, the
 * cache timeouts). Without `--yes` it only says what it finds; with `--yes` it writes a new,
 * acknowledged marker, which every replica adopts at its next confirmation. What to check first
 * is in docs/payments.md: the claims that were lost are not brought back by this.
 *
 * With several businesses (`BUSINESSES_FILE`) each business has its own ledger, under its
 * namespace: `--business <id>` names the one to look at and acknowledge.
 */
import { parseArgs } from 'node:util';
import { businessNamespace } from '../src/app.ts';
import { BUSINESS_ID } from '../src/businesses/accounts.ts';
import {
  CLAIMS_LEGACY_LEDGER,
  CLAIMS_NAMESPACE,
  CLAIMS_SINGLE_BUSINESS_LEDGER,
} from '../src/payments/claims.ts';
import { readSetting } from '../src/settings.ts';
import { RedisLedger } from '../src/state/claims.ts';
import { RedisConnection } from '../src/state/redis.ts';

/** What the marker says, in words. */
function describe(marker: string | undefined): string {
  if (marker === undefined) return 'no ledger marker (no claim made yet, or the store was emptied)';
  if (marker.startsWith('lost:')) return `LOST since ${marker.slice(5)}: confirmations suspended`;
  if (marker.startsWith('a:')) return `acknowledged at ${marker.split(':').slice(2).join(':')}`;
  return 'kept (no loss seen)';
}

async function main(argv: string[]): Promise<number> {
  const env = process.env;
  let yes: boolean;
  let business: string | undefined;
  try {
    const { values } = parseArgs({
      args: argv,
      options: { yes: { type: 'boolean', default: false }, business: { type: 'string' } },
    });
    yes = values.yes === true;
    business = values.business;
  } catch (error) {
    console.error(
      `${error instanceof Error ? error.message : String(error)}\nUsage: npm run claims:acknowledge -- [--business <id>] [--yes]`,
    );
    return 2;
  }
  if (business !== undefined && !BUSINESS_ID.test(business)) {
    console.error('--business: a business id is 1 to 64 letters, digits, `-` or `_`.');
    return 2;
  }
  if (business === undefined && readSetting(env, 'BUSINESSES_FILE') !== undefined) {
    console.error(
      'BUSINESSES_FILE is set: each business has its own claims ledger; name one with --business <id>.',
    );
    return 2;
  }
  const url = readSetting(env, 'CACHE_URL');
  if (url === undefined) {
    console.error(
      'CACHE_URL is not set: claims are in each process’s memory; nothing to acknowledge.',
    );
    return 2;
  }
  const connection = new RedisConnection(
    {
      url,
      keyPrefix: readSetting(env, 'CACHE_KEY_PREFIX'),
      connectTimeoutMs: readSetting(env, 'CACHE_CONNECT_TIMEOUT_MS'),
      commandTimeoutMs: readSetting(env, 'CACHE_COMMAND_TIMEOUT_MS'),
    },
    { state: () => {}, error: () => {} },
  );
  try {
    if (!(await connection.connected(readSetting(env, 'CACHE_CONNECT_TIMEOUT_MS')))) {
      console.error('Redis did not answer (CACHE_URL): nothing done.');
      return 1;
    }
    // The layout the gateway's claims use (src/app.ts, claimStores): the one business's as it
    // always was, each of several under its namespace.
    const ledger =
      business === undefined
        ? new RedisLedger(connection, CLAIMS_NAMESPACE, CLAIMS_LEGACY_LEDGER)
        : new RedisLedger(
            connection,
            [businessNamespace(business), ...CLAIMS_NAMESPACE],
            CLAIMS_SINGLE_BUSINESS_LEDGER,
          );
    const marker = await ledger.marker();
    const whose = business === undefined ? '' : ` of business ${business}`;
    console.log(`claims ledger${whose}: ${describe(marker)}`);
    const durability = await ledger.durability();
    if (!durability.readable) console.log(`durability: not readable (${durability.reason})`);
    else {
      const { appendonly, appendfsync, maxmemoryPolicy, risks } = durability;
      console.log(
        `durability: appendonly ${appendonly}, appendfsync ${appendfsync}, maxmemory-policy ${maxmemoryPolicy}`,
      );
      for (const risk of risks) console.log(`  risk: ${risk}`);
    }
    if (!yes) {
      console.log(
        `Nothing written. After checking what docs/payments.md lists, run again with --yes to let confirmPayment confirm again${whose}.`,
      );
      return 0;
    }
    await ledger.acknowledge();
    console.log(
      `acknowledged${whose}: every replica confirms again from its next confirmation${business === undefined ? '' : ' of this business'}.`,
    );
    return 0;
  } finally {
    await connection.close();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    },
  );
}
