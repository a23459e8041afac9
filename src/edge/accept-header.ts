/**
 * Whether an Accept header lets a response be of media type `type`/`subtype` (RFC 9110 §12.5.1): the
 * header's media ranges are matched whole (`application/json-seq` is not `application/json`), the most
 * specific range that matches decides (the any-type wildcard, then `type/*`, then the type itself), and
 * its weight `q=0` means "not acceptable". A header that names no matching range accepts nothing of the kind.
 * `type` and `subtype` are given in lower case.
 */
export function acceptsMedia(accept: string, type: string, subtype: string): boolean {
  let rank = 0;
  let weight = 0;
  for (const range of accept.split(',')) {
    const semi = range.indexOf(';');
    const media = (semi < 0 ? range : range.slice(0, semi)).trim().toLowerCase();
    const slash = media.indexOf('/');
    if (slash <= 0 || slash !== media.lastIndexOf('/')) continue;
    const t = media.slice(0, slash);
    const s = media.slice(slash + 1);
    const r = t === type && s === subtype ? 3 : t === type && s === '*' ? 2 : t === '*' && s === '*' ? 1 : 0;
    if (r === 0 || r < rank) continue;
    const q = semi < 0 ? 1 : qualityOf(range.slice(semi + 1));
    // Equally specific ranges (a header listing one twice): the more favourable one.
    weight = r > rank ? q : Math.max(weight, q);
    rank = r;
  }
  return rank > 0 && weight > 0;
}

/** The `q` parameter among a range's parameters; 1 when absent, or unreadable (read liberally). */
function qualityOf(params: string): number {
  for (const p of params.split(';')) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = p.slice(eq + 1).trim();
    const q = value === '' ? Number.NaN : Number(value);
    return Number.isFinite(q) ? q : 1;
  }
  return 1;
}
