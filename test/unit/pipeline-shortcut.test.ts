import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createPersistedStore } from '../../src/graphql/persisted.ts';
import { GatewayMetrics } from '../../src/observability/metrics.ts';
import { createPipeline, parseAndValidateHooks } from '../../src/pipeline.ts';
import { memoryState } from '../../src/state/index.ts';

/** The pipeline as the gateway builds it, in production or not. */
function pipeline(production: boolean) {
  const config = loadConfig({});
  return createPipeline({
    graphiql: false,
    metrics: new GatewayMetrics(),
    hardening: {
      limits: config.limits,
      production,
      introspection: !production,
      trustedDocuments: config.trustedDocuments,
    },
    persistedStore: createPersistedStore({ bounds: config.persisted, state: memoryState() }),
  });
}

describe("skipping envelop's parse and validate steps for documents prepared before", () => {
  // When this fails, a plugin with a parse or validate hook was added (or a Yoga upgrade brought
  // one): the shortcut is off and that hook runs for every operation. Read what the hook does
  // for a document that parsed and validated before; add it to the known ones only if nothing.
  it('is on in production and in development, with the plugins the gateway registers', () => {
    expect(pipeline(true).skipsPreparedSteps).toBe(true);
    expect(pipeline(false).skipsPreparedSteps).toBe(true);
  });

  it('is off once a plugin has a parse or validate hook not known to do nothing then', () => {
    const ours = { onParse: () => {} };
    const yogas = [{ onParse: () => {} }, { onValidate: () => {} }, { onValidate: () => {} }];
    const quiet = { onExecute: () => {} };
    expect(parseAndValidateHooks([...yogas, ours, quiet, false], [ours])).toEqual({
      hooked: 4,
      skippable: true,
    });
    const added = { onValidate: () => {} };
    expect(parseAndValidateHooks([...yogas, ours, added], [ours]).skippable).toBe(false);
  });
});
