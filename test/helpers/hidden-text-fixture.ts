import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** test/fixtures/hidden-text-server.mjs: an upstream whose texts carry each kind of hidden text. */
export const HIDDEN_TEXT_FIXTURE = resolve('test/fixtures/hidden-text-server.mjs');

/** What the fixture prints with --print: its sample strings by name, and a pattern its texts match. */
export const HIDDEN_TEXT = JSON.parse(spawnSync(process.execPath, [HIDDEN_TEXT_FIXTURE, '--print'], { encoding: 'utf8' }).stdout) as { samples: Record<string, string>; pattern: string };

/** The fixture as the shared stdio upstream "ht". */
export const HIDDEN_TEXT_UPSTREAM = { name: 'ht', transport: 'stdio' as const, command: process.execPath, args: [HIDDEN_TEXT_FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };

/** An endpoint's hidden-text scanning of results with `action` and the fixture's pattern. */
export const resultsScanning = (action: 'audit' | 'strip' | 'block') => ({ guardrails: { hiddenText: { results: action, patterns: [HIDDEN_TEXT.pattern] } } });

/** One endpoint of "ht" per results action: /off, /audit, /strip, /block. */
export const RESULTS_ENDPOINTS = [
  { path: '/off', upstreams: ['ht'] },
  { path: '/audit', upstreams: ['ht'], ...resultsScanning('audit') },
  { path: '/strip', upstreams: ['ht'], ...resultsScanning('strip') },
  { path: '/block', upstreams: ['ht'], ...resultsScanning('block') },
];
