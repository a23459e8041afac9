import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allMethods,
  clientCapabilityNeeds,
  isClientRequest,
  listChangedNotifications,
  listMethods,
  listOf,
  methodSpec,
  metricLabel,
  targetOf,
} from '../../../src/jsonrpc/methods.js';
import { PROTOCOL_REVISIONS } from '../../../src/jsonrpc/protocol-revisions.js';

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

describe('method table', () => {
  it('knows nothing about names it does not define, Object.prototype members included', () => {
    for (const name of [...PROTOTYPE_NAMES, 'tools/frobnicate', '']) {
      assert.equal(methodSpec(name), undefined, name);
      assert.equal(listOf(name), undefined, name);
      assert.equal(targetOf(name, { name: 'x' }), undefined, name);
      assert.equal(metricLabel(name), 'other', name);
      assert.equal(isClientRequest(methodSpec(name)), false, name);
    }
  });

  // The server→client requests too: a shared upstream's refused ones are counted by method.
  it('gives the metrics labels the gateway has always used, and "other" for the rest', () => {
    const labelled = [...allMethods()].filter((s) => s.metric !== 'other').map((s) => s.method).sort();
    assert.deepEqual(labelled, [
      'completion/complete', 'elicitation/create', 'initialize', 'logging/setLevel', 'ping', 'prompts/get', 'prompts/list', 'resources/list', 'resources/read',
      'resources/subscribe', 'resources/templates/list', 'resources/unsubscribe', 'roots/list', 'sampling/createMessage', 'server/discover', 'subscriptions/listen',
      'tools/call', 'tools/list',
    ]);
    for (const s of allMethods()) assert.ok(s.metric === s.method || s.metric === 'other', s.method);
  });

  it('audits tools/call, resources/read and prompts/get only', () => {
    assert.deepEqual([...allMethods()].filter((s) => s.audited).map((s) => s.method).sort(), ['prompts/get', 'resources/read', 'tools/call']);
  });

  it('retries only requests that change nothing upstream', () => {
    const idempotent = [...allMethods()].filter((s) => s.idempotent).map((s) => s.method).sort();
    assert.deepEqual(idempotent, ['completion/complete', 'ping', 'prompts/get', 'prompts/list', 'resources/list', 'resources/read', 'resources/templates/list', 'tools/list']);
    assert.equal(methodSpec('tools/call')!.idempotent, false);
    assert.equal(methodSpec('resources/subscribe')!.idempotent, false);
  });

  it('finds the target of each catalogue request', () => {
    assert.deepEqual(targetOf('tools/call', { name: 'fs__read' }), { kind: 'tool', name: 'fs__read', absent: 'tool' });
    assert.deepEqual(targetOf('prompts/get', { name: 'p' }), { kind: 'prompt', name: 'p', absent: 'prompt' });
    for (const m of ['resources/read', 'resources/subscribe', 'resources/unsubscribe']) assert.deepEqual(targetOf(m, { uri: 'file:///a' }), { kind: 'resource', name: 'file:///a', absent: 'resource' });
    assert.deepEqual(targetOf('completion/complete', { ref: { type: 'ref/prompt', name: 'p' } }), { kind: 'prompt', name: 'p', absent: 'prompt' });
    assert.deepEqual(targetOf('completion/complete', { ref: { type: 'ref/resource', uri: 'r://{x}' } }), { kind: 'resource', name: 'r://{x}', absent: 'template' });
    assert.equal(targetOf('completion/complete', { ref: { type: 'ref/other' } }), undefined);
    assert.equal(targetOf('tools/list', {}), undefined);
  });

  it('describes the four lists, their items and their list-changed notifications', () => {
    assert.deepEqual(
      listMethods().map((s) => [s.method, s.list.key, s.list.item, s.list.field, s.list.named, s.capability]),
      [
        ['tools/list', 'tools', 'tool', 'name', true, 'tools'],
        ['prompts/list', 'prompts', 'prompt', 'name', true, 'prompts'],
        ['resources/list', 'resources', 'resource', 'uri', false, 'resources'],
        ['resources/templates/list', 'resourceTemplates', 'resource', 'uriTemplate', false, 'resources'],
      ],
    );
    assert.deepEqual(listChangedNotifications(), ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed']);
    for (const n of listChangedNotifications()) assert.equal(methodSpec(n)!.kind, 'notification');
  });

  it('says which client capability each server→client request needs, on a null-prototype record', () => {
    const needs = clientCapabilityNeeds();
    assert.equal(Object.getPrototypeOf(needs), null);
    assert.deepEqual({ ...needs }, { 'sampling/createMessage': 'sampling', 'elicitation/create': 'elicitation', 'roots/list': 'roots' });
    assert.equal(needs.__proto__, undefined);
  });

  it('tells client requests from what only a server sends', () => {
    assert.equal(isClientRequest(methodSpec('tools/call')), true);
    assert.equal(isClientRequest(methodSpec('ping')), true);
    assert.equal(isClientRequest(methodSpec('sampling/createMessage')), false);
    assert.equal(isClientRequest(methodSpec('notifications/initialized')), false);
    for (const s of allMethods()) if (s.route) assert.ok(isClientRequest(s), `${s.method} is routed, so a client request`);
  });

  it('knows which revisions have each method (2026-07-28 dropped the handshake and subscribe)', () => {
    for (const s of allMethods()) {
      assert.ok(s.revisions.length > 0, s.method);
      for (const r of s.revisions) assert.ok((PROTOCOL_REVISIONS as readonly string[]).includes(r), `${s.method}: ${r}`);
    }
    const removed = ['initialize', 'notifications/initialized', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'notifications/roots/list_changed', 'notifications/elicitation/complete'];
    for (const m of removed) assert.ok(!methodSpec(m)!.revisions.includes('2026-07-28'), m);
    for (const m of ['server/discover', 'subscriptions/listen']) assert.deepEqual(methodSpec(m)!.revisions, ['2026-07-28']);
    for (const m of ['tools/call', 'tools/list', 'resources/read', 'prompts/get', 'completion/complete']) assert.ok(methodSpec(m)!.revisions.includes('2026-07-28'), m);
    assert.ok(!methodSpec('elicitation/create')!.revisions.includes('2025-03-26'), 'elicitation arrived in 2025-06-18');
  });

  it('rows are frozen: nobody edits the table at run time', () => {
    assert.ok(Object.isFrozen(methodSpec('tools/call')));
  });
});
