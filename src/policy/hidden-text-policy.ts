import { createHash } from 'node:crypto';
import type { HiddenTextAction } from '../config/guardrails-schema.js';
import { withoutPassword } from '../observability/uri-password.js';
import type { AuditLog, HiddenTextAuditEvent } from './audit-log.js';
import { shown, type HiddenKind, type HiddenTextScanner } from './hidden-text.js';
import { walkDefinition, walkResult, type Finding, type Walked } from './hidden-text-walk.js';

/** A listed resource is a definition too (its name, description, title): a host gives a model the list; and so are an upstream's instructions. */
export type DefinitionKind = 'tool' | 'prompt' | 'template' | 'resource' | 'instructions';
/**
 * What a scanned answer is (`completion`: values offered for a prompt's or template's argument), or what an
 * upstream asks the client: `sampling`, a sampling request's messages, which the client's model reads;
 * `elicitation`, the question and form a person is asked to answer; or what it tells the client: a `log`
 * line's data, a `progress` message, the reason it `cancel`s what it asked.
 */
export type ResultKind = 'tool' | 'prompt' | 'resource' | 'completion' | 'sampling' | 'elicitation' | 'log' | 'progress' | 'cancel';
type Acted = Exclude<HiddenTextAction, 'off'>;
type Definition = Record<string, unknown>;

/** Hidden-text events as they happen, for metrics. */
export interface HiddenTextObserver {
  /** `fields` fields held hidden text of `kind`, in a definition or a result, and `action` was taken. */
  found(kind: HiddenKind, where: 'definition' | 'result', action: Acted, fields: number): void;
}

export interface HiddenTextDeps {
  audit?: AuditLog | undefined;
  observer?: HiddenTextObserver | undefined;
}

/** Who a result was for (the audit line's caller fields). */
export interface ResultCaller {
  upstream: string | undefined;
  /** The tool or prompt name, or the resource URI, as the client sent it. */
  name: string;
  tenant: string;
  subject: string;
  session: string | undefined;
}

/** What becomes of a result with hidden text: passed on (audit), its clean copy (strip), or blocked. */
export type ResultVerdict = { result: Record<string, unknown> } | { blocked: readonly Finding[]; action: 'block' };

/** The audit rule a call to a withheld definition is recorded with. */
export const DEFINITIONS_RULE = 'guardrails.hiddenText.definitions';

/** One definition's scan, shared by every tenant whose patterns are the same. */
interface DefinitionScan {
  findings: Finding[];
  /** The definition without its hidden text; undefined when that cannot be (a name carries it). */
  clean: Definition | undefined;
  /** Actions audited and counted for it already: once each, however often it is listed or called. */
  reported: Set<Acted> | undefined;
}

/** Definitions remembered by content, per pattern set: every tool of a large gateway, old and new version. */
const KEPT = 4000;
/** Templates screened in lists (withheld or shown), remembered for completion/complete. */
const TEMPLATES = 10_000;

/**
 * Definition scans for one pattern set, cached by content: a catalogue's objects are looked up by
 * identity, a list's fresh copies by their hash, so each definition is scanned once per change.
 */
export class DefinitionScans {
  readonly scanner: HiddenTextScanner;
  readonly #byObject = new WeakMap<object, DefinitionScan>();
  readonly #byContent = new Map<string, DefinitionScan>();

  constructor(scanner: HiddenTextScanner) {
    this.scanner = scanner;
  }

  of(definition: Definition): DefinitionScan {
    const known = this.#byObject.get(definition);
    if (known) return known;
    const hash = createHash('sha256').update(JSON.stringify(definition)).digest('base64url');
    let scan = this.#byContent.get(hash);
    if (!scan) {
      const w = walkDefinition(this.scanner, definition);
      scan = { findings: w.findings, clean: w.stuck ? undefined : (w.clean as Definition), reported: undefined };
      this.#byContent.set(hash, scan);
      if (this.#byContent.size > KEPT) this.#byContent.delete(this.#byContent.keys().next().value!);
    }
    this.#byObject.set(definition, scan);
    return scan;
  }
}

/** Per kind, the number of fields holding it (a summary finding stands for its `fields`). */
function byKind(findings: readonly Finding[]): Map<HiddenKind, number> {
  const out = new Map<HiddenKind, number>();
  for (const f of findings) out.set(f.kind, (out.get(f.kind) ?? 0) + (f.fields ?? 1));
  return out;
}

/**
 * Hidden-text scanning as in force for one endpoint and tenant: what is done with definitions and with
 * results, and the patterns. A DefinitionScreen (src/router/definition-screen.ts) for the router.
 */
export class HiddenTextPolicy {
  readonly definitions: HiddenTextAction;
  readonly results: HiddenTextAction;
  readonly rule = DEFINITIONS_RULE;
  /** What its clean copies depend on (the patterns): policies with one key strip every definition alike. */
  readonly key: string;
  readonly #endpoint: string;
  readonly #scans: DefinitionScans;
  readonly #deps: HiddenTextDeps;
  /** Templates a list screened, by upstream and uriTemplate: true when withheld (completion/complete goes by it). */
  readonly #templates = new Map<string, boolean>();

  constructor(o: { definitions: HiddenTextAction; results: HiddenTextAction; endpoint: string; scans: DefinitionScans; deps: HiddenTextDeps }) {
    this.definitions = o.definitions;
    this.results = o.results;
    this.#endpoint = o.endpoint;
    this.#scans = o.scans;
    this.#deps = o.deps;
    this.key = o.scans.scanner.key;
  }

  /**
   * What clients are shown of a definition: itself (nothing hidden, or audit), its clean copy (strip),
   * or undefined: withheld from lists and calls (block; strip when a name carries the hidden text).
   */
  show(kind: DefinitionKind, upstream: string, definition: Definition): Definition | undefined {
    if (this.definitions === 'off') return definition;
    const out = this.#show(this.definitions, kind, upstream, definition);
    if (kind === 'template') this.#judged(upstream, String(definition.uriTemplate), out === undefined);
    return out;
  }

  #show(definitions: Acted, kind: DefinitionKind, upstream: string, definition: Definition): Definition | undefined {
    const scan = this.#scans.of(definition);
    if (scan.findings.length === 0) return definition;
    const action: Acted = definitions === 'strip' && scan.clean === undefined ? 'block' : definitions;
    if (!scan.reported?.has(action)) {
      (scan.reported ??= new Set()).add(action);
      // A template is a URI: named, as a resource is, with the password of its user information replaced.
      const name = kind === 'template' ? withoutPassword(String(definition.uriTemplate)) : String(definition.name);
      this.#report({ where: 'definition', action, endpoint: this.#endpoint, upstream, item: kind, name: shown(name, 128), findings: scan.findings });
    }
    if (action === 'audit') return definition;
    return action === 'strip' ? scan.clean : undefined;
  }

  /**
   * Whether a list withheld this template (completion/complete on it is then refused too), or showed it;
   * undefined when no list has shown it to this policy (this process, since its start or the last clear).
   */
  withholds(upstream: string, uriTemplate: string): boolean | undefined {
    return this.#templates.get(`${upstream}\0${uriTemplate}`);
  }

  #judged(upstream: string, uriTemplate: string, withheld: boolean): void {
    if (this.#templates.size >= TEMPLATES) this.#templates.clear();
    this.#templates.set(`${upstream}\0${uriTemplate}`, withheld);
  }

  /** A result's hidden text; undefined when it has none (results scanning must be on). `data`: see walkResult. */
  scanResult(result: Record<string, unknown>, data = false): Walked | undefined {
    const w = walkResult(this.#scans.scanner, result, data);
    return w.findings.length === 0 ? undefined : w;
  }

  /** Audits and counts what scanResult found, and says what the client gets. */
  settleResult(item: ResultKind, walked: Walked, result: Record<string, unknown>, caller: ResultCaller): ResultVerdict {
    const action: Acted = this.results === 'block' || (this.results === 'strip' && walked.stuck) ? 'block' : this.results === 'strip' ? 'strip' : 'audit';
    const { upstream, tenant, subject, session } = caller;
    // A resource (and a completion's template, or prompt name) is named with the password of a URI replaced, as on
    // the per-call audit line: before 2026-12-07 a template named by a connection string kept it.
    const name = shown(item === 'resource' || item === 'completion' ? withoutPassword(caller.name) : caller.name, 256);
    this.#report({ where: 'result', action, endpoint: this.#endpoint, upstream, item, name, findings: walked.findings, tenant, subject, session });
    if (action === 'block') return { blocked: walked.findings, action };
    return { result: action === 'strip' ? (walked.clean as Record<string, unknown>) : result };
  }

  #report(e: HiddenTextAuditEvent & { findings: readonly Finding[]; action: Acted }): void {
    this.#deps.audit?.hiddenText(e);
    const observer = this.#deps.observer;
    if (observer) for (const [kind, n] of byKind(e.findings)) observer.found(kind, e.where, e.action, n);
  }
}
