/**
 * Resource URIs in normal form (RFC 3986 §6.2.2): what tenant resource rules are matched against.
 *
 * A pattern is matched against text, but an upstream reads a URI: `evil://files/%2e%2e/%73ecret/b` and
 * `evil://files/secret/b` are the same resource to most servers, and only the second contains `secret`.
 * The policy therefore accepts a URI only when it is already in the normal form computed here, so the
 * text the rules see is exactly the text the upstream gets (see `uriProblem`).
 */

import { domainToASCII } from 'node:url';

// RFC 3986 appendix B: splits any string into scheme, authority, path, query and fragment.
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;
const PERCENT = /%([0-9A-Fa-f]{2})/g;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** §6.2.2.1 and §6.2.2.2: escapes of unreserved characters decoded, every other escape in upper-case hex. */
export function normalizeEscapes(part: string): string {
  if (!part.includes('%')) return part;
  return part.replace(PERCENT, (_, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** §5.2.4 remove_dot_segments, step for step: "." and ".." resolved; ".." above the root is dropped. */
export function removeDotSegments(path: string): string {
  if (!path.includes('.')) return path;
  let input = path;
  let output = '';
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../') || input === '/..') {
      input = `/${input.slice(input === '/..' ? 3 : 4)}`;
      output = output.slice(0, Math.max(0, output.lastIndexOf('/')));
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', 1);
      const end = next === -1 ? input.length : next;
      output += input.slice(0, end);
      input = input.slice(end);
    }
  }
  return output;
}

/**
 * What a URL parser (WHATWG: Node's URL, fetch) removes before it reads a URI: every tab and newline,
 * and controls and spaces before or after it. "ht\ttps://h/ad\nmin" is https://h/admin to it.
 */
const STRIPPED = /[\t\n\r]|^[\x00-\x20]+|[\x00-\x20]+$/g;

/** Schemes whose default port a URL parser drops (§6.2.3: `https://h:443/` is `https://h/`). */
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443', ftp: '21' };
/** Schemes whose host a URL parser maps to ASCII (IDNA: full-width letters, upper case, punycode). */
const DOMAIN_SCHEMES = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);
/** Schemes whose URIs carry no user information (RFC 9110 §4.2.4, RFC 6455 §3): one that does is refused. */
const NO_USERINFO = new Set(['http', 'https', 'ws', 'wss']);

/** An IPv6 literal as a URL parser writes it (lower case, zeros compressed); anything else in brackets lower-cased. */
function normalIpv6(host: string): string {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host.toLowerCase(); // no IPv6 address (IPvFuture, a template): a parser reads it as written
  }
}

/**
 * A port as a URL parser reads it: its leading zeros dropped (`:0443` is port 443, the default of
 * https, and `:08443` is `:8443`); one that is not all digits (a template's `{port}`) as written.
 */
function normalPort(port: string): string {
  return /^:\d+$/.test(port) ? `:${port.slice(1).replace(/^0+(?=\d)/, '')}` : port;
}

/** A host as a URL parser reads it: IDNA-mapped to ASCII for the schemes that have domains, an IPv6 literal in its canonical form, else lower case. */
function normalHost(scheme: string, host: string): string {
  if (host.startsWith('[') && host.endsWith(']')) return normalIpv6(host);
  if (!DOMAIN_SCHEMES.has(scheme) || host === '' || host.startsWith('[')) return host.toLowerCase();
  const ascii = domainToASCII(host);
  return ascii === '' ? host.toLowerCase() : ascii; // not a domain at all: uriProblem refuses a non-ASCII one
}

/**
 * The URI in normal form: lower-case scheme and host, unreserved escapes decoded, dot-segments removed,
 * and what a URL parser treats as the same (§6.2.3): a default port dropped (and a port's leading zeros),
 * an IDNA host in ASCII, an IPv6 host in its canonical form, an empty query delimiter dropped, for `file:`
 * the `localhost` host and the missing `//` of `file:/x`, for the other special schemes a host written
 * without `//` (`https:h/x`), the empty path a parser reads as `/` (`https://h?x`), and the tabs,
 * newlines and surrounding controls a parser removes.
 */
export function normalizeUri(uri: string): string {
  const read = uri.replace(STRIPPED, '');
  const m = PARTS.exec(read)!;
  const [, rawScheme, rawAuthority, rawPath = '', query, fragment] = m;
  const scheme = rawScheme?.toLowerCase();
  const special = scheme !== undefined && Object.hasOwn(DEFAULT_PORTS, scheme);
  if (special && !rawAuthority) {
    // A special scheme's host is read without its "//" too: "https:h/x", "https:/h/x" and "https:///h/x" are https://h/x.
    const rest = read.slice(rawScheme!.length + 1).replace(/^[/\\]+/, '');
    if (rest !== '' && !'?#'.includes(rest[0]!)) return normalizeUri(`${scheme}://${rest}`);
  }
  let authority = rawAuthority;
  let path = rawPath;
  if (scheme === 'file' && authority === undefined) {
    // "file:/x" and "file:x" are file:///x to a URL parser.
    authority = '';
    if (!path.startsWith('/')) path = `/${path}`;
  }
  // A Windows drive written "c|" is "c:" to a URL parser (file:///c|/x is file:///c:/x).
  if (scheme === 'file' && /^\/[A-Za-z]\|(?:\/|$)/.test(path)) path = `${path.slice(0, 2)}:${path.slice(3)}`;
  let out = scheme === undefined ? '' : `${scheme}:`;
  if (authority !== undefined) {
    // userinfo@host:port — only the host is case-insensitive (§6.2.2.1).
    const at = authority.lastIndexOf('@');
    let userinfo = at === -1 ? '' : normalizeEscapes(authority.slice(0, at + 1));
    // A parser drops an empty password, and empty credentials altogether ("https://@h/" is https://h/).
    if (special) userinfo = userinfo === '@' || userinfo === ':@' ? '' : userinfo.replace(/:@$/, '@');
    const hostPort = normalizeEscapes(authority.slice(at + 1));
    const colon = hostPort.startsWith('[') ? hostPort.indexOf(':', hostPort.indexOf(']')) : hostPort.lastIndexOf(':');
    let host = normalHost(scheme ?? '', colon === -1 ? hostPort : hostPort.slice(0, colon));
    let port = normalPort(colon === -1 ? '' : hostPort.slice(colon));
    if (scheme !== undefined && (port === ':' || port === `:${DEFAULT_PORTS[scheme]}`)) port = '';
    if (scheme === 'file' && host === 'localhost' && userinfo === '' && port === '') host = '';
    out += `//${userinfo}${host}${port}`;
  }
  path = removeDotSegments(normalizeEscapes(path));
  // A special scheme's or file:'s path is never empty to a URL parser (§6.2.3): "https://h?x" is https://h/?x.
  if (path === '' && authority !== undefined && (special || scheme === 'file')) path = '/';
  out += path;
  if (query) out += `?${normalizeEscapes(query)}`;
  if (fragment !== undefined) out += `#${normalizeEscapes(fragment)}`;
  return out;
}

/** Every escape decoded (reserved ones too), leniently: how a careless server might read a path. */
function decodeAll(part: string): string {
  return part.replace(PERCENT, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A UTF-16 surrogate without its pair: a URI holding one has no UTF-8 spelling for the rules to see. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type UriProblem = 'not-normal' | 'ambiguous';

/**
 * Why a URI cannot be matched safely, or undefined when it can.
 * - `not-normal`: it differs from its normal form (it would match rules as one text and reach the
 *   upstream as another).
 * - `ambiguous`: it is normal, but what it names depends on how the server reads it: an escaped `/` or
 *   `\` (`%2F`, `%5C`: a separator to a server that decodes them), a `\`, an empty path segment (`//`,
 *   which servers and file systems collapse), a NUL, a fragment that could climb out of the resource to a
 *   server reading it as more path (a `.` or `..` segment, a `\` or a NUL, escaped or not: a fragment is
 *   otherwise the client's, and the rules judge the URI without it, see TenantPolicy), a host that is no domain, a domain ending in its root's dot (`internal.example.`), or user information
 *   in an http(s) or ws(s) URI (`https://x@internal.example/`). The rules would see one resource where the server may read another.
 */
export function uriProblem(uri: string): UriProblem | undefined {
  if (normalizeUri(uri) !== uri) return 'not-normal';
  const [, scheme = '', authority = '', path = '', , fragment] = PARTS.exec(uri)!;
  if ((fragment !== undefined && climbs(fragment)) || path.includes('//') || /[^\x21-\x7e]/.test(authority)) return 'ambiguous';
  if (LONE_SURROGATE.test(uri)) return 'ambiguous';
  // A domain with its root's dot ("internal.example.") is the same host to DNS, and another text to the rules.
  if (DOMAIN_SCHEMES.has(scheme) && /\.(?::\d*)?$/.test(authority)) return 'ambiguous';
  // User information in an http(s) or ws(s) URI (RFC 9110 §4.2.4: never sent, an error to a recipient):
  // "https://x@internal.example/a" is internal.example to a server that reads it, another text to the rules.
  if (NO_USERINFO.has(scheme) && authority.includes('@')) return 'ambiguous';
  // A NUL as itself too (`file:///etc/shadow<NUL>.txt`: /etc/shadow to a server that hands the path to C).
  if (!path.includes('%') && !path.includes('\\') && !path.includes('\0')) return undefined;
  if (/%2F|%5C/.test(path) || path.includes('\\')) return 'ambiguous';
  if (decodeAll(path).includes('\0')) return 'ambiguous';
  return undefined;
}

/** Whether a fragment, decoded, holds a `.` or `..` segment, a `\` or a NUL: more path to a careless server. */
function climbs(fragment: string): boolean {
  const decoded = decodeAll(fragment);
  return decoded.includes('\\') || decoded.includes('\0') || decoded.split('/').some((seg) => seg === '.' || seg === '..');
}

/** Characters no URI holds as written (RFC 3986 §2; RFC 3987 §3.1 maps them from an IRI): non-ASCII, controls, space, `"<>^`|`. */
const OUTSIDE_URI = /[\x00-\x20\x7f"<>^`|\u0080-\uffff]/;
const OUTSIDE_URI_RUNS = new RegExp(OUTSIDE_URI.source + '+', 'g');

/**
 * The text tenant patterns and URIs are compared as: every character outside URI syntax written as
 * its UTF-8 escapes (RFC 3987 §3.1, how an IRI becomes a URI). `notes://x/sécret` and
 * `notes://x/s%C3%A9cret` name one resource to a server that decodes escapes, and both are in normal
 * form (an upstream may list either: refusing one would hide IRIs), so the rules must see them as one
 * text or a deny written one way is passed the other. `{` and `}` stay: they delimit a template's
 * expressions. A lone surrogate (no UTF-8 spelling) is refused before this (`uriProblem`).
 */
export function matchForm(text: string): string {
  if (!OUTSIDE_URI.test(text)) return text;
  return text.replace(OUTSIDE_URI_RUNS, (run) => {
    let out = '';
    for (const byte of Buffer.from(run, 'utf8')) out += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
    return out;
  });
}

/** A URI template's expressions (RFC 6570: `{userId}`, `{+path}`, `{?limit,offset}`). */
const EXPRESSIONS = /\{[^{}]*\}/g;

/**
 * Why a URI template (completion/complete's `ref/resource`) cannot be matched safely, or undefined when
 * it can: its written parts are held to a URI's normal form, each expression standing for one
 * unreserved character. An expression is no URI text: `users://{userId}/profile` (a variable in
 * camelCase where the host goes, as servers write them) is not a URI with an upper-case host.
 */
export function templateProblem(template: string): UriProblem | undefined {
  // A path expansion ({/segments}) starts with its "/": "https://{host}{/path}" has a path.
  return uriProblem(template.replace(EXPRESSIONS, (e) => (e.startsWith('{/') ? '/x' : 'x')));
}

/** RFC 6570 operators whose expansion starts with their own character (`{/id}` → "/1", `{?q}` → "?q=x"). */
const SEPARATED = /\{([/.;?&#])/g;

/**
 * A template as patterns also see it: each expression that expands with a separator has it written
 * before it (`notes://secret{/id}` → `notes://secret/{/id}`), so that a deny of `notes://secret/*`, the
 * URIs it gives, hides it too. Undefined when no expression does (the template is matched as written).
 */
export function separatedTemplate(template: string): string | undefined {
  const out = template.replace(SEPARATED, '$1{$1');
  return out === template ? undefined : out;
}

/**
 * A file URI with an authority or a query (`file://h/dir/x`, `file://u@/dir/x`, `file:///dir/x?v=1`) as the path a
 * server that ignores them reads (`file:///dir/x`): `new URL(uri).pathname` in Node, `urlparse(uri).path` in
 * Python and Go's url.Parse all do. Undefined for any other URI (a file URI with neither: the common case).
 */
export function filePath(uri: string): string | undefined {
  if (!uri.startsWith('file://')) return undefined;
  const hash = uri.indexOf('#');
  let query = uri.indexOf('?');
  if (hash >= 0 && query > hash) query = -1; // a "?" in the fragment is no query
  const hosted = uri[7] !== '/';
  if (!hosted && query < 0) return undefined;
  const end = query >= 0 ? query : hash >= 0 ? hash : uri.length;
  const slash = hosted ? uri.indexOf('/', 7) : 7;
  return slash < 0 || slash > end ? 'file:///' : `file://${uri.slice(slash, end)}`;
}
