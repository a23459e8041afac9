#!/usr/bin/env node
// First: it sets a V8 flag that must be in place before the other modules are evaluated.
import './heap-tuning.js';
import { holdEarlySignals } from './early-signals.js';

// serve: a signal that comes while the rest loads (about 1 s from dist/, 3 s under tsx) and the app is
// built no longer kills the gateway: a SIGHUP is remembered, a stop exits 0 (early-signals.ts). Hence
// the command line is imported only after, dynamically: a static import loads it before this line runs.
if (process.argv[2] === 'serve') holdEarlySignals();
await import('./cli.js');
