/**
 * RFC 6570 expansion of a resource template with string values: the URI a client makes of a template and
 * the values it fills in (completion/complete suggests them one variable at a time). What tenant policy
 * judges a completion value by (completion-values.ts).
 */

/** How each operator expands (RFC 6570 §3.2.1, appendix A): its first character, separator, whether it names its variables, and what an empty value gives. */
interface Operator {
  first: string;
  sep: string;
  named: boolean;
  ifEmpty: string;
  /** Reserved characters and escapes pass as written ({+var}, {#var}); else every character but the unreserved is escaped. */
  reserved: boolean;
}

const simple: Operator = { first: '', sep: ',', named: false, ifEmpty: '', reserved: false };
const OPERATORS: Readonly<Record<string, Operator>> = {
  '+': { ...simple, reserved: true },
  '#': { ...simple, first: '#', reserved: true },
  '.': { ...simple, first: '.', sep: '.' },
  '/': { ...simple, first: '/', sep: '/' },
  ';': { ...simple, first: ';', sep: ';', named: true },
  '?': { ...simple, first: '?', sep: '&', named: true, ifEmpty: '=' },
  '&': { ...simple, first: '&', sep: '&', named: true, ifEmpty: '=' },
};

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const RESERVED = /^[:/?#[\]@!$&'()*+,;=]$/;
const ESCAPE = /^%[0-9A-Fa-f]{2}/;

function encode(value: string, reserved: boolean): string {
  let out = '';
  for (let i = 0; i < value.length; ) {
    const c = String.fromCodePoint(value.codePointAt(i)!);
    if (UNRESERVED.test(c) || (reserved && (RESERVED.test(c) || ESCAPE.test(value.slice(i))))) out += c;
    else for (const b of Buffer.from(c, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    i += c.length;
  }
  return out;
}

/** One expression's expansion; undefined when it names a variable `vars` lacks. */
function expression(body: string, vars: Readonly<Record<string, string>>): string | undefined {
  const op = OPERATORS[body[0]!];
  const o = op ?? simple;
  const parts: string[] = [];
  for (const spec of (op ? body.slice(1) : body).split(',')) {
    const m = /^([A-Za-z0-9_.%]+)(?::([0-9]{1,4})|\*)?$/.exec(spec);
    if (!m) return undefined;
    const value = Object.hasOwn(vars, m[1]!) ? vars[m[1]!] : undefined;
    if (value === undefined) return undefined;
    const cut = m[2] === undefined ? value : [...value].slice(0, Number(m[2])).join('');
    const text = encode(cut, o.reserved);
    parts.push(o.named ? `${m[1]}${cut === '' ? o.ifEmpty : `=${text}`}` : text);
  }
  return o.first + parts.join(o.sep);
}

/**
 * The URI `template` gives with these values, or undefined when it cannot be told: a variable without a
 * value (RFC 6570 would leave it out; the client may yet give it one), or an expression that is not well formed.
 */
export function expandTemplate(template: string, vars: Readonly<Record<string, string>>): string | undefined {
  let out = '';
  let last = 0;
  for (const m of template.matchAll(/\{([^{}]*)\}/g)) {
    const expanded = expression(m[1]!, vars);
    if (expanded === undefined) return undefined;
    out += template.slice(last, m.index) + expanded;
    last = m.index + m[0].length;
  }
  out += template.slice(last);
  return out.includes('{') || out.includes('}') ? undefined : out;
}
