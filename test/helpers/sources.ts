/**
 * The record sources (src/cache/sources.ts) of one process over a state, reading a real upstream
 * (a fixture on loopback answering both interfaces) with one call per read (no retries).
 */
import { type FlightOptions, LeaseFlightLock } from '../../src/cache/flight.ts';
import { createSources, type RecordSources } from '../../src/cache/sources.ts';
import { RecordCache } from '../../src/cache/store.ts';
import { loadConfig, type UpstreamPolicyConfig } from '../../src/config.ts';
import type { SharedState } from '../../src/state/index.ts';
import { KycClient, PaymentClient } from '../../src/upstream/clients.ts';

const config = loadConfig({});

/**
 * Sources over `state` and its record store `cache`, the upstream at `baseUrl`; with a shared
 * state, single flight between processes on its leases (`flight`).
 */
export function testSources(options: {
  baseUrl: string;
  state: SharedState;
  cache?: RecordCache;
  upstream?: Partial<UpstreamPolicyConfig>;
  flight: FlightOptions;
}): RecordSources {
  const { baseUrl, state } = options;
  const upstream = { ...config.upstream, maxAttempts: 1, ...options.upstream };
  return createSources({
    payment: new PaymentClient({ baseUrl, accessToken: 'test-token' }, upstream),
    kyc: new KycClient(
      {
        baseUrl,
        secretKey: 'test-secret',
        publicKey: 'pk',
        businessSlug: 'shop',
        sdkScriptUrl: 'http://127.0.0.1/sdk.js',
      },
      upstream,
    ),
    cache: options.cache ?? new RecordCache(state.records(config.cache)),
    policy: config.cache,
    businessSlug: 'shop',
    ...(state.shared && { flightLock: new LeaseFlightLock(state, options.flight) }),
  });
}
