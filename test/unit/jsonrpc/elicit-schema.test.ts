import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { elicitContentProblem } from '../../../src/jsonrpc/elicit-schema.js';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 5 },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    ok: { type: 'boolean' },
    color: { type: 'string', oneOf: [{ const: 'red', title: 'Red' }, { const: 'blue', title: 'Blue' }] },
    tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
  },
  required: ['name'],
};

describe('elicitContentProblem', () => {
  it('lets through content the requestedSchema allows, undeclared properties included', () => {
    assert.equal(elicitContentProblem(SCHEMA, { name: 'Ada', age: 36, ok: false, color: 'red', tags: ['a'], extra: 'x' }), undefined);
  });
  it('names a missing required property, a wrong type, a value not offered, a bound broken', () => {
    const bad = [{}, { name: 5 }, { name: 'Ada', age: 1.5 }, { name: 'Ada', ok: 'yes' }, { name: 'Ada', color: 'green' }, { name: 'Ada', tags: ['c'] }, { name: 'Ada', tags: ['a', 'b', 'a'] }, { name: 'Adaline' }, { name: 'Ada', age: -1 }];
    for (const content of bad) assert.match(String(elicitContentProblem(SCHEMA, content)), /requestedSchema/, JSON.stringify(content));
  });
  it('judges nothing without a schema to read', () => {
    for (const schema of [undefined, null, 'x', { type: 'object' }]) assert.equal(elicitContentProblem(schema, { name: 5 }), undefined);
  });
});
