// What the audit line, spans and log lines keep of a URI's user information: the password replaced.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutPassword, withoutPasswords } from '../../../src/observability/uri-password.js';

describe('uri-password', () => {
  it('withoutPassword replaces the password at a URI\'s start, the rest kept', () => {
    assert.equal(withoutPassword('postgres://app:s3cret@db/orders?x=1'), 'postgres://app:[redacted]@db/orders?x=1');
    assert.equal(withoutPassword('redis://:s3cret@cache:6379/0'), 'redis://:[redacted]@cache:6379/0');
    assert.equal(withoutPassword('file:///a@b'), 'file:///a@b');
    assert.equal(withoutPassword('https://user@host/x'), 'https://user@host/x');
  });

  it('a password or user name with an unescaped "@" is replaced whole: the user information ends at the last "@", as a URL parser reads it (found by a review)', () => {
    assert.equal(withoutPassword('postgres://app:p@ss@db/orders'), 'postgres://app:[redacted]@db/orders');
    assert.equal(withoutPassword('https://me@corp:s3cret@host/x?a@b'), 'https://me@corp:[redacted]@host/x?a@b');
    assert.equal(withoutPassword('https://user@host:8443/x@y'), 'https://user@host:8443/x@y');
    assert.equal(withoutPasswords('cannot read postgres://app:p@ss@db/orders, mysql://u:a@b@h/x: denied'), 'cannot read postgres://app:[redacted]@db/orders, mysql://u:[redacted]@h/x: denied');
  });

  it('withoutPasswords replaces every URI password in a text (an error message quoting URIs)', () => {
    assert.equal(withoutPasswords('cannot watch postgres://app:s3cret@db/orders: denied'), 'cannot watch postgres://app:[redacted]@db/orders: denied');
    assert.equal(withoutPasswords('a mysql://u:p1@h1/x and redis://:p2@h2'), 'a mysql://u:[redacted]@h1/x and redis://:[redacted]@h2');
    assert.equal(withoutPasswords('mail me at a@b.c'), 'mail me at a@b.c');
    assert.equal(withoutPasswords('no at sign'), 'no at sign');
  });
});
