import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { scaled } from './test/helpers/timeouts.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (`main`) and ESM (`module`); Node and graphql-yoga load the CJS one.
    // Vite would pick the ESM one for our sources, and two copies of GraphQLError break
    // `instanceof` (errors would be masked). One copy, as in production.
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts', 'sandbox/test/**/*.test.ts'],
    // Scaled for a busy machine (test/helpers/timeouts.ts): a passing test never waits for it.
    testTimeout: scaled(20_000),
    hookTimeout: scaled(20_000),
    pool: 'forks',
  },
});
