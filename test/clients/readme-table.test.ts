// README.md's "Client compatibility" table is rendered from the matrix rows and the installed client
// versions; each row's suite runs exactly what the row claims. A client upgrade, a row changed without
// the README, or a README edit that claims more than the tests prove fails here.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MATRIX, ROOT, installed, renderTable } from './matrix.js';

const START = '<!-- client-matrix:start (test/clients/readme-table.test.ts renders this table) -->';
const END = '<!-- client-matrix:end -->';

describe('client matrix: README table', () => {
  it('README.md shows exactly the tested matrix, with the installed versions', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const from = readme.indexOf(START);
    const to = readme.indexOf(END);
    assert.ok(from >= 0 && to > from, `README.md has the markers ${START} … ${END}`);
    const shown = readme.slice(from + START.length, to).trim();
    assert.equal(shown, renderTable(), 'README.md "Client compatibility" table: paste the expected text between the markers');
  });

  it('each client is pinned to the version it was tested at, and each row names a suite that runs it', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    for (const [key, row] of Object.entries(MATRIX)) {
      assert.equal(pkg.devDependencies[row.package], installed(row.package).version, `${row.package} pinned exactly in package.json`);
      assert.ok(existsSync(join(ROOT, row.test)), `${row.test} exists`);
      assert.match(readFileSync(join(ROOT, row.test), 'utf8'), new RegExp(`clientSuite\\(MATRIX\\.${key},`), `${row.test} runs the ${key} row`);
    }
  });
});
