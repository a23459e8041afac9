/**
 * One CSS value read as the single token it must be (a number, a colour), as style-declarations.ts gives
 * it (lower case, trimmed): anything else reads as nothing, so what cannot be judged is left, and no
 * expression here can backtrack over a long value.
 */

/**
 * Below this an opacity (or a colour's alpha) leaves nothing a person can see: 5 %, text at 1/20 of its
 * contrast; below 0 it is clamped to 0.
 */
export const OPACITY_LIMIT = 0.05;

/**
 * A CSS number and its unit: group 1 the number, 2 the unit ("" for none, `%`). Each character has one way
 * to match (a digit run then its fraction), so a long run failing at its end is read once.
 */
export const NUMBER = /^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)(%|[a-z]*)$/i;
/** CSS pixels per absolute unit. */
export const PIXELS: Readonly<Record<string, number>> = { px: 1, pt: 4 / 3, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6 };
const HEX = /^#(?:[0-9a-f]{4}|[0-9a-f]{8})$/;
const COLOR_FUNCTION = /^(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(([^()]*)\)$/;

/** A number or a percentage as a fraction (`50%` is 0.5); NaN for anything else (`0.5px`, `calc(…)`). */
function amount(v: string | undefined): number {
  const m = v === undefined ? null : NUMBER.exec(v);
  if (m === null || (m[2] !== '' && m[2] !== '%')) return NaN;
  return m[2] === '%' ? parseFloat(m[1]!) / 100 : parseFloat(m[1]!);
}

/** A length as CSS pixels: an absolute unit, or 0 without one; NaN for anything else (`1em`, `50%`, `auto`). */
export function pixels(v: string | undefined): number {
  const m = v === undefined ? null : NUMBER.exec(v);
  if (m === null) return NaN;
  const n = parseFloat(m[1]!);
  return m[2] === '' ? (n === 0 ? 0 : NaN) : n * (PIXELS[m[2]!] ?? NaN);
}

/** Font-relative units, in ems, for OFF_SCREEN_EMS. */
const EMS: Readonly<Record<string, number>> = { em: 1, rem: 1, ex: 0.5, ch: 0.5 };
/** How far a move must go to be clearly off the page, in pixels or in ems: a layout never moves text so far. */
const OFF_SCREEN_PX = 1000;
const OFF_SCREEN_EMS = 100;

/** Viewport units, in viewport widths: a move of 100vw to the left takes any box that fits the page out of it. */
const VIEWPORT: Readonly<Record<string, number>> = { vw: 1, vmax: 1 };
const OFF_SCREEN_VIEWPORT = 100;

/**
 * How much of a move clearly off the page a length is (1 or more: that far; -1 or less: that far back), so
 * moves in different units add up: 1000px, 100em or (`horizontal`) 100vw each make one. Unitless: 0, or
 * (`unitless`, SVG's user units) px. NaN for anything else (`50%`, `auto`): a share of the box, not of the page.
 */
export function offScreenShare(v: string | undefined, horizontal: boolean, unitless = false): number {
  const m = v === undefined ? null : NUMBER.exec(v);
  if (m === null) return NaN;
  const n = parseFloat(m[1]!);
  const unit = m[2]!.toLowerCase();
  if (n === 0) return 0;
  const px = unit === '' && unitless ? 1 : PIXELS[unit];
  if (px !== undefined) return (n * px) / OFF_SCREEN_PX;
  if (EMS[unit] !== undefined) return (n * EMS[unit]) / OFF_SCREEN_EMS;
  return horizontal && VIEWPORT[unit] !== undefined ? (n * VIEWPORT[unit]) / OFF_SCREEN_VIEWPORT : NaN;
}

/** A length of `sign` × (1000px, 100em or, `horizontal`, 100vw) or further that way (`-9999px`, `-999em` for sign -1). */
export function offScreen(v: string | undefined, sign: 1 | -1, horizontal = false): boolean {
  return offScreenShare(v, horizontal) * sign >= 1;
}

/** A colour no one sees: `transparent`, or an alpha below OPACITY_LIMIT (`rgba(…, 0)`, `rgb(0 0 0 / 0%)`, `#RRGGBB00`, `#RGB0`). */
export function transparentColor(v: string | undefined): boolean {
  if (v === undefined) return false;
  if (v === 'transparent') return true;
  if (HEX.test(v)) return parseInt(v.length === 5 ? v[4]! + v[4]! : v.slice(7), 16) / 255 < OPACITY_LIMIT;
  const m = COLOR_FUNCTION.exec(v);
  if (m === null) return false;
  const args = m[1]!;
  const slash = args.lastIndexOf('/');
  // The legacy comma form takes its alpha fourth; the modern one after a "/" (none: opaque).
  const alpha = slash >= 0 ? args.slice(slash + 1) : args.includes(',') ? args.split(',')[3] : undefined;
  return alpha !== undefined && amount(alpha.trim()) < OPACITY_LIMIT;
}
