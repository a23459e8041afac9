/**
 * Resource URIs in normal form (RFC 3986 §6.2.2): what tenant resource rules are matched against.
 *
 * A pattern is matched against text, but an upstream reads a URI: `evil://files/%2e%2e/%73ecret/b` and
 * `evil://files/secret/b` are the same resource to most servers, and only the second contains `secret`.
 * The policy therefore accepts a URI only when it is already in the normal form computed here, so the
 * text the rules see is exactly the text the upstream gets (see `uriProblem`).
 */

// RFC 3986 appendix B: splits any string into scheme, authority, path, query and fragment.
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;
const PERCENT = /%([0-9A-Fa-f]{2})/g;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** §6.2.2.1 and §6.2.2.2: escapes of unreserved characters decoded, every other escape in upper-case hex. */
function normalizeEscapes(part: string): string {
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

/** The URI in normal form: lower-case scheme and host, unreserved escapes decoded, dot-segments removed. */
export function normalizeUri(uri: string): string {
  const m = PARTS.exec(uri)!;
  const [, scheme, authority, path = '', query, fragment] = m;
  let out = scheme === undefined ? '' : `${scheme.toLowerCase()}:`;
  if (authority !== undefined) {
    // userinfo@host:port — only the host is case-insensitive (§6.2.2.1).
    const at = authority.lastIndexOf('@');
    const userinfo = at === -1 ? '' : normalizeEscapes(authority.slice(0, at + 1));
    const hostPort = normalizeEscapes(authority.slice(at + 1));
    const colon = hostPort.startsWith('[') ? hostPort.indexOf(':', hostPort.indexOf(']')) : hostPort.lastIndexOf(':');
    const host = colon === -1 ? hostPort : hostPort.slice(0, colon);
    out += `//${userinfo}${host.toLowerCase()}${colon === -1 ? '' : hostPort.slice(colon)}`;
  }
  out += removeDotSegments(normalizeEscapes(path));
  if (query !== undefined) out += `?${normalizeEscapes(query)}`;
  if (fragment !== undefined) out += `#${normalizeEscapes(fragment)}`;
  return out;
}

/** Every escape decoded (reserved ones too), leniently: how a careless server might read a path. */
function decodeAll(part: string): string {
  return part.replace(PERCENT, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export type UriProblem = 'not-normal' | 'ambiguous';

/**
 * Why a URI cannot be matched safely, or undefined when it can.
 * - `not-normal`: it differs from its normal form (it would match rules as one text and reach the
 *   upstream as another).
 * - `ambiguous`: it is normal, but a server that also decodes reserved escapes (`%2F`, `%5C`) or treats
 *   `\` as a separator would see a "." or ".." segment in its path, or a NUL: a traversal the rules
 *   cannot see. Such a URI names no legitimate resource.
 */
export function uriProblem(uri: string): UriProblem | undefined {
  if (normalizeUri(uri) !== uri) return 'not-normal';
  const path = PARTS.exec(uri)![3] ?? '';
  if (!path.includes('%') && !path.includes('\\')) return undefined;
  const decoded = decodeAll(path);
  if (decoded.includes('\0') || decoded.split(/[\\/]/).some((seg) => seg === '.' || seg === '..')) return 'ambiguous';
  return undefined;
}
