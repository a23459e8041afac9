// The console's browser tests drive Debian's Chromium through playwright-core. One place says where it is,
// why a test is skipped without it, and how it is launched (no sandbox: CI runs as root in a container).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `false` when Chromium is there; otherwise the reason, for `describe(..., { skip })`. */
export const chromiumSkip: false | string = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}
