/**
 * Every ```graphql block of the README and docs/ is a valid document against schema.graphql, so
 * an example never names a field the schema does not have (or no longer has). Schema excerpts
 * (type definitions, not operations) are fenced ```graphql sdl and not validated here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { expect, it } from 'vitest';

const ROOT = process.cwd();
const schema = buildSchema(readFileSync(join(ROOT, 'schema.graphql'), 'utf8'));
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

const blocks = FILES.flatMap((file) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^```graphql\n([\s\S]*?)^```$/gm)].map(
    ([, source], index) => ({ name: `${file} #${index + 1}`, source: source ?? '' }),
  ),
);

it('finds the README query and the example operations', () => {
  expect(blocks.map(({ name }) => name)).toEqual(
    expect.arrayContaining(['README.md #1', 'docs/schema.md #1']),
  );
});

it.each(blocks)('$name validates against schema.graphql', ({ source }) => {
  // The example operations are anonymous, one block holding several: each validated alone.
  const document = parse(source);
  for (const definition of document.definitions) {
    const errors = validate(schema, { kind: document.kind, definitions: [definition] });
    expect(errors.map((error) => error.message)).toEqual([]);
  }
});
