import { configSchema } from './schema.js';
import { keysAt } from './schema-keys.js';
import { isPlainObject } from './plain-object.js';

/**
 * Recognises the files that sit next to a gateway config and get passed by mistake — a Docker Compose
 * file, a Kubernetes manifest, Helm values — and says so in one line, instead of a list of "unknown
 * key" problems about a file that was never meant to be a gateway config.
 */

// The schema's own top-level keys: a new section is known here without a second list.
const GATEWAY_KEYS = keysAt(configSchema, undefined, []) ?? [];

/** Text that reads as a gateway config: a top-level "upstreams:" or "endpoints:" line. */
const looksLikeConfigText = (v: unknown) => typeof v === 'string' && /^(upstreams|endpoints):/m.test(v);

/** Where inside a foreign document a gateway config is embedded, if anywhere (a ConfigMap's data, Helm's config). */
function embedded(doc: Record<string, unknown>): string | undefined {
  for (const [k, v] of Object.entries(doc)) {
    if (isPlainObject(v) && ('upstreams' in v || 'endpoints' in v)) return `its "${k}" section is one: put that in a file of its own`;
    if (isPlainObject(v)) {
      for (const [k2, v2] of Object.entries(v)) if (looksLikeConfigText(v2)) return `the text of ${k}[${JSON.stringify(k2)}] is one: put that in a file of its own`;
    }
  }
  return undefined;
}

function kubernetes(docs: readonly Record<string, unknown>[]): string | undefined {
  const kinds = docs.filter((d) => typeof d.apiVersion === 'string' && typeof d.kind === 'string').map((d) => String(d.kind));
  if (kinds.length === 0) return undefined;
  const hint = docs.map(embedded).find((h) => h !== undefined);
  const what = kinds.length === 1 ? `is a Kubernetes manifest (kind: ${kinds[0]})` : `holds Kubernetes manifests (kinds: ${[...new Set(kinds)].join(', ')})`;
  return `this file ${what}, not a Switchboard gateway config${hint ? `; ${hint}` : ''}`;
}

/**
 * Why the decoded YAML documents are not a gateway config, or undefined when they may be one (then the
 * schema has the last word). A document with any gateway key is taken for a config with mistakes in it.
 */
export function notAGatewayConfig(docs: readonly unknown[]): string | undefined {
  const objects = docs.filter(isPlainObject);
  const k8s = kubernetes(objects);
  if (k8s) return k8s;
  if (docs.length > 1) return `the file holds ${docs.length} YAML documents; a gateway config is one mapping with upstreams and endpoints`;
  const doc = objects[0];
  if (!doc || 'upstreams' in doc || 'endpoints' in doc) return undefined;
  const keys = Object.keys(doc);
  const foreign = keys.filter((k) => !GATEWAY_KEYS.includes(k));
  // A config with a few misspelt sections is still a config: the schema names each one.
  if (foreign.length === 0 || foreign.length * 2 <= keys.length) return undefined;
  if ('services' in doc) {
    return 'this is a Docker Compose file (it has "services"), not a Switchboard gateway config; pass the gateway config it mounts (deploy/docker-compose.yaml mounts deploy/examples/compose.yaml)';
  }
  const hint = embedded(doc);
  const shown = `${foreign.slice(0, 8).join(', ')}${foreign.length > 8 ? ', …' : ''}`;
  return `this is not a Switchboard gateway config: it has no upstreams or endpoints, and its top-level keys (${shown}) are not gateway sections (${GATEWAY_KEYS.join(', ')})${hint ? `; ${hint}` : ''}`;
}
