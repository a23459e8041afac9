/**
 * Whether an element's attributes hide it (and what it holds), as the browser applies them (style-as-applied.ts):
 * HTML's `hidden`, a style, SVG's presentation attributes (`display="none"`, `transform="scale(0)"`). One value
 * that hides is looked for over the whole attribute text (HIDING: more, never less, than the browser applies);
 * values that hide together or that another can undo, by the declarations the element has (style-declarations.ts).
 * Without a parser or stylesheets, as hidden-markup.ts reads tags.
 */
import { asApplied } from './style-as-applied.js';
import { reduceCalc } from './style-calc.js';
import { styleDeclarations } from './style-declarations.js';
import { hasAttribute } from './tag-attributes.js';
import { NUMBER, OPACITY_LIMIT, PIXELS, offScreen, offScreenShare, pixels, transparentColor } from './style-values.js';

/**
 * Attributes and declarations that hide by one value. `visibility: collapse` hides as `hidden` does (but in a
 * table): before 2026-12-06 it hid text unfound.
 */
const HIDING = /(?:^|[\s/])hidden(?:\s|=|\/|$)|display\s*[:=]\s*["']?none|visibility\s*[:=]\s*["']?(?:hidden|collapse)|(?:^|[\s/])type\s*=\s*["']?hidden\b/i;
/**
 * An opacity or a font-size, group 2 its value as one token (judged by faded): a number near zero hides as 0
 * does. The token is taken whole, then read by NUMBER anchored, so a long number is read once.
 */
/** The `font` shorthand (in a style, or as an attribute): group 1 its value, to the declaration's end. */
const FONT = /(?<![\w-])font\s*[:=]\s*["']?([^;"'<>]*)/gi;
const FADING = /(?<![\w-])(opacity|font-size)\s*[:=]\s*["']?([-+.\w%]*)/gi;
/**
 * The thresholds below which a value hides as 0 does (before 2026-12-07 only an exact 0 was found, and
 * `opacity:0.001` or `font-size:0.1px` hid a sentence as surely): an opacity below OPACITY_LIMIT, a font-size below 2px (1.5pt) or 0.15em (rem; 0.3ex, ch; 15%),
 * a scale below 0.05 in either axis, a size below 2px. A font-size in another unit (vw, …) hides only at 0.
 */
const SCALE_LIMIT = 0.05;
const PX_LIMIT = 2;
const FONT_LIMIT: Readonly<Record<string, number>> = { em: 0.15, rem: 0.15, ex: 0.3, ch: 0.3, '%': 15 };
/** Pixels per absolute unit (unitless: an SVG attribute's user units, px), and em, rem at the default 16px. */
const PX: Readonly<Record<string, number>> = { '': 1, ...PIXELS, em: 16, rem: 16 };
/** An inset that clips this much of an axis by lengths clips all of any element text sits in. */
const INSET_LIMIT = 1000;
/** Only attributes naming one of these can shrink, clip, collapse, unpaint or move an element to nothing (collapsed). */
const COLLAPSING = /scale|matrix|clip|height|width|color|fill|zoom|indent|position|translate|filter|rotate/i;
/** SVG's text elements: painted by `fill` and `stroke`, not by `color`. */
const SVG_TEXT = new Set(['text', 'tspan', 'textpath']);

/** Padding shows what overflows a box of no size (`height:0; padding-bottom:56%`, a common aspect-ratio box). */
const PADDING = { height: ['padding-top', 'padding-bottom', 'padding-block', 'padding-block-start', 'padding-block-end'], width: ['padding-left', 'padding-right', 'padding-inline', 'padding-inline-start', 'padding-inline-end'] };
/** A digit 1–9: a value with one is not zero. */
const NONZERO = /[1-9]/;
/** A function and its arguments; begun only at a name's first letter, so a long word is passed over once. */
const FUNCTION = /(?<![\w-])([a-z][\w-]*)\(([^()]*)\)/gi;
const ARGS = /[\s,]+/;
/** What a clip-path's shape is and holds: an inset, a circle, an ellipse (others are not judged). */
const SHAPE = /^(inset|circle|ellipse)\(([^()]*)\)/;
/** Where a shape's sizes end: its corners' rounding, its centre. */
const SHAPE_TAIL = /\b(?:round|at)\b/;
const RECT = /^rect\(([^()]*)\)/;
/** Overflow values that do not show what leaves the box; the second, those that turn `visible` beside them into `auto`. */
const UNSHOWN = /^(?:hidden|clip|auto|scroll|overlay)$/;
const TO_AUTO = /^(?:hidden|auto|scroll|overlay)$/;
/** A background clipped to the text (`background-clip: text`, in the `background` shorthand too) paints the glyphs. */
const CLIP_TO_TEXT = /(?:^|[\s,])text(?:$|[\s,])/;

/** Whether `attrs` (a tag's attribute text, as written) hide the element named `tag`, once decoded as the browser decodes them. */
export function hidingAttributes(attrs: string, tag = ''): boolean {
  // calc() computed first (style-calc.ts): `opacity: calc(0)` fades as `opacity: 0` does.
  const applied = reduceCalc(asApplied(attrs));
  return HIDING.test(applied) || popover(attrs) || faded(applied) || smallFontShorthand(applied) || (COLLAPSING.test(applied) && collapsed(styleDeclarations(attrs), SVG_TEXT.has(tag.toLowerCase())));
}

/** The word, before the attributes are read: most tags lack it. */
const POPOVER = /(?:^|[\s/])popover(?:\s|=|\/|$)/i;

/**
 * A `popover` attribute (any value): the browser's own style sheet hides the element until a script or a button
 * opens it. Its own attribute only: the word in a class or a title (Bootstrap's `class="fade popover"`) hides
 * nothing. Before 2026-12-07 it hid text unfound.
 */
function popover(attrs: string): boolean {
  return POPOVER.test(attrs) && hasAttribute(attrs, 'popover');
}

/** An opacity or a font-size below its threshold, anywhere in the attributes (as HIDING reads them). */
function faded(applied: string): boolean {
  FADING.lastIndex = 0; // exec, not matchAll: no copy of the expression per tag
  for (let m = FADING.exec(applied); m !== null; m = FADING.exec(applied)) {
    const v = NUMBER.exec(m[2]!);
    if (v === null) continue;
    const n = parseFloat(v[1]!);
    const unit = v[2]!.toLowerCase();
    if (m[1]!.length === 7 ? (unit === '' ? n : unit === '%' ? n / 100 : NaN) < OPACITY_LIMIT : smallFont(n, unit)) return true;
  }
  return false;
}

/**
 * The `font` shorthand's size below its threshold (`font: 0/0 a`, the image-replacement idiom; `font: italic bold 0.1px
 * serif`): its first token that is a length, a percentage or a unitless 0 (a unitless number but 0 is a weight), before
 * any "/" (the line-height, which hides nothing). Before 2026-12-07 only `font-size` was read, and these hid text unfound.
 */
function smallFontShorthand(applied: string): boolean {
  FONT.lastIndex = 0;
  for (let m = FONT.exec(applied); m !== null; m = FONT.exec(applied)) {
    for (const token of m[1]!.trim().split(ARGS)) {
      const v = NUMBER.exec(token.split('/', 1)[0]!);
      if (v === null) continue; // a style, variant or weight keyword
      const n = parseFloat(v[1]!);
      const unit = v[2]!.toLowerCase();
      if (unit === '' && n !== 0) continue; // a weight
      if (smallFont(n, unit)) return true;
      break; // the size: what follows is the family
    }
  }
  return false;
}

/** A font-size of 0 in any unit, or a positive one below its unit's threshold (a negative one is invalid: the inherited size shows). */
function smallFont(n: number, unit: string): boolean {
  if (n === 0) return true;
  if (!(n > 0)) return false;
  const limit = FONT_LIMIT[unit];
  return limit !== undefined ? n < limit : n * (PX[unit] ?? NaN) < PX_LIMIT;
}

/** A CSS number and its unit ("" for none), or undefined. */
function numeric(v: string | undefined): { n: number; unit: string } | undefined {
  const m = v === undefined ? null : NUMBER.exec(v);
  return m === null ? undefined : { n: parseFloat(m[1]!), unit: m[2]!.toLowerCase() };
}

/** A length in px (an absolute unit, or em and rem at 16px); NaN for any other (a percentage, vw, calc()). */
function px(v: string | undefined): number {
  const l = numeric(v);
  return l === undefined ? NaN : l.n * (PX[l.unit] ?? NaN);
}

/** A scale factor as a number (a percentage divided by 100); NaN for anything else. */
function factor(v: string | undefined): number {
  const f = numeric(v);
  return f === undefined ? NaN : f.unit === '' ? f.n : f.unit === '%' ? f.n / 100 : NaN;
}

/** A number, a length or a percentage that is zero (`0`, `-0.0`, `0px`, `0%`): NaN is not. */
function zero(v: string | undefined): boolean {
  return v !== undefined && v !== '' && parseFloat(v) === 0;
}

/** Zero, or a length below 2px: a size that shows nothing. */
export function tiny(v: string | undefined): boolean {
  const p = px(v);
  return zero(v) || (p >= 0 && p < PX_LIMIT);
}

/**
 * Hidden by a value that leaves nothing to see: a transform or `scale` with a 2D factor below 0.05 (scale(0.01),
 * scaleX(0), a matrix or matrix3d that flattens some direction so), a `zoom` above 0 and below 0.05, a
 * `clip-path` that clips all (inset 50% from two sides, or 1000px, a circle or ellipse of radius below 2px), a
 * `clip` rect of 1px² or less, text painted in no colour one sees, text moved off the page, or a height or width
 * below 2px whose overflow does not show. Before 2026-12-06 each hid text unfound at 0, before 2026-12-07 near
 * it (and matrix3d, `zoom`, paint, moves and 1px clips at all).
 */
function collapsed(a: Map<string, string>, svgText: boolean): boolean {
  if (scaledAway(a.get('transform') ?? '', a.get('scale'))) return true;
  // zoom: 0 is read as 1 (normal) by browsers; a positive zoom near it leaves nothing to see.
  const zoom = factor(a.get('zoom'));
  if (zoom > 0 && zoom < SCALE_LIMIT) return true;
  if (clipsAll(a.get('clip-path')) || clipsAll(a.get('-webkit-clip-path'))) return true;
  if (filteredAway(a.get('filter')) || filteredAway(a.get('-webkit-filter'))) return true;
  const clip = a.get('clip');
  if (clip !== undefined && emptyRect(clip)) return true;
  if (svgText ? unpaintedSvgText(a) : unpainted(a)) return true;
  if (offPage(a) || translatedAway(a)) return true;
  return zeroBox(a, 'height') || zeroBox(a, 'width');
}

/**
 * A `filter` whose opacity() functions, multiplied, fade the element below OPACITY_LIMIT (`filter: opacity(0)`), as
 * the `opacity` property would. Before 2026-12-07 it hid text unfound. Other functions (blur, brightness) are left.
 */
function filteredAway(filter: string | undefined): boolean {
  if (filter === undefined || !filter.includes('opacity')) return false;
  let alpha = 1;
  for (const m of filter.matchAll(FUNCTION)) {
    if (m[1]!.toLowerCase() !== 'opacity') continue;
    // No argument is 1; one not known (var(), a calc() left) is taken as 1, so it hides none of the others.
    const f = m[2]!.trim() === '' ? 1 : factor(m[2]!.trim());
    if (!Number.isNaN(f)) alpha *= Math.min(1, Math.max(0, f));
  }
  return alpha < OPACITY_LIMIT;
}

/**
 * The `scale` property's factors and the transform's scale functions, multiplied per axis (a rotation between
 * them is not followed: more than the browser shows, never less), and each matrix alone by its least stretch
 * (a matrix3d by its 2D part, divided by its w, and only without perspective); a rotateX() or rotateY() summed
 * per axis turns it edge-on near 90deg (before 2026-12-07 `rotateX(90deg)` hid text unfound).
 */
function scaledAway(transform: string, scale: string | undefined): boolean {
  const s = scale?.split(ARGS);
  let x = s === undefined ? 1 : times(1, s[0]);
  let y = s === undefined ? 1 : times(1, s[1] ?? s[0]);
  // Turns about the x and y axes, summed: one of 90deg shows the element edge-on (its height or width projected to 0).
  let aboutX = 0;
  let aboutY = 0;
  for (const m of transform.matchAll(FUNCTION)) {
    const name = m[1]!;
    const n = m[2]!.trim().split(ARGS);
    if (name === 'rotatex') aboutX += radians(n[0]);
    else if (name === 'rotatey') aboutY += radians(n[0]);
    else if (name === 'scale' || name === 'scale3d') {
      x = times(x, n[0]);
      y = times(y, name === 'scale' ? (n[1] ?? n[0]) : n[1]);
    } else if (name === 'scalex') x = times(x, n[0]);
    else if (name === 'scaley') y = times(y, n[0]);
    else if (name === 'matrix' && n.length === 6 && leastStretch(n.map(parseFloat)) < SCALE_LIMIT) return true;
    else if (name === 'matrix3d' && n.length === 16 && flat3d(n.map(parseFloat))) return true;
  }
  return Math.abs(x * Math.cos(aboutY)) < SCALE_LIMIT || Math.abs(y * Math.cos(aboutX)) < SCALE_LIMIT;
}

const TO_RADIANS: Readonly<Record<string, number>> = { deg: Math.PI / 180, rad: 1, grad: Math.PI / 200, turn: 2 * Math.PI };

/** An angle in radians; 0 for one not known (var(), a unit that is none), so it turns nothing. */
function radians(v: string | undefined): number {
  const a = numeric(v);
  if (a === undefined) return 0;
  return a.unit === '' ? 0 : a.n * (TO_RADIANS[a.unit] ?? 0);
}

/** `x` scaled by the factor `v`; a factor not known (`none`, calc()) is taken as 1, so it hides none of the others. */
function times(x: number, v: string | undefined): number {
  const f = factor(v);
  return Number.isNaN(f) ? x : x * f;
}

/** The least factor a matrix(a, b, c, d, e, f) scales any direction by: its smaller singular value (0 when its determinant is). */
function leastStretch([a, b, c, d]: number[]): number {
  const sum = a! * a! + b! * b! + c! * c! + d! * d!;
  const det = a! * d! - b! * c!;
  return Math.sqrt(Math.max(0, (sum - Math.sqrt(Math.max(0, sum * sum - 4 * det * det))) / 2));
}

/** A matrix3d without perspective (its fourth column 0, 0, 0, w ≠ 0) whose x–y part, divided by w, stretches some direction below 0.05. */
function flat3d(n: number[]): boolean {
  const w = n[15]!;
  return n[3] === 0 && n[7] === 0 && n[11] === 0 && w !== 0 && leastStretch([n[0]! / w, n[1]! / w, n[4]! / w, n[5]! / w]) < SCALE_LIMIT;
}

/**
 * Text painted in a colour no one sees: `color` (or `-webkit-text-fill-color`, which paints the glyphs
 * over it) transparent or of an alpha below 0.05. Gradient text (`background-clip: text`), a text shadow or
 * an outline still draws the glyphs, so it is left. Before 2026-12-07 transparent text was not found.
 */
function unpainted(a: Map<string, string>): boolean {
  const fill = a.get('-webkit-text-fill-color');
  if (!transparentColor(fill === undefined || fill === 'currentcolor' ? a.get('color') : fill)) return false;
  for (const p of ['background-clip', '-webkit-background-clip', 'background']) if (CLIP_TO_TEXT.test(a.get(p) ?? '')) return false;
  const shadow = a.get('text-shadow');
  if (shadow !== undefined && shadow !== 'none') return false;
  return !NONZERO.test(a.get('-webkit-text-stroke') ?? a.get('-webkit-text-stroke-width') ?? '');
}

/**
 * SVG text neither filled (`fill` none or transparent, `fill-opacity` below 0.05) nor stroked where it shows
 * (no `stroke`, or one that is none, transparent, of `stroke-opacity` below 0.05 or of width 0). Text only: a
 * shape without fill is often its outline or a hit area, and holds no text. A stroke a parent gives cannot be
 * known here, as a class cannot. Before 2026-12-07 unpainted SVG text was not found.
 */
export function unpaintedSvgText(a: Map<string, string>): boolean {
  const fill = a.get('fill');
  if (!(fill === 'none' || transparentColor(fill) || factor(a.get('fill-opacity')) < OPACITY_LIMIT)) return false;
  const stroke = a.get('stroke');
  return stroke === undefined || stroke === 'none' || transparentColor(stroke) || factor(a.get('stroke-opacity')) < OPACITY_LIMIT || zero(a.get('stroke-width'));
}

/**
 * Text moved clearly off the page, where no scroll reaches it: a `text-indent` of -1000px (-100em) or
 * further, or an absolute or fixed box whose `left`, `top` or margin there is, or whose `right` or
 * `bottom` (the `left` or `top` being auto) is +1000px or further. A move off to the right or the bottom
 * can be scrolled to, and a relative one keeps its place in the flow: both are left. Before 2026-12-07
 * no move was found.
 */
function offPage(a: Map<string, string>): boolean {
  if (offScreen(a.get('text-indent'), -1, true)) return true;
  const position = a.get('position');
  if (position !== 'absolute' && position !== 'fixed') return false;
  // The shorthands' sides: top, right = top, bottom = top, left = right.
  const [it, ir = it, ib = it, il = ir] = (a.get('inset') ?? '').split(ARGS);
  const [mt, mr = mt, , ml = mr] = (a.get('margin') ?? '').split(ARGS);
  const left = a.get('left') ?? il;
  const top = a.get('top') ?? it;
  if (offScreen(left, -1, true) || offScreen(a.get('margin-left') ?? ml, -1, true) || offScreen(top, -1) || offScreen(a.get('margin-top') ?? mt, -1)) return true;
  return ((left || 'auto') === 'auto' && offScreen(a.get('right') ?? ir, 1, true)) || ((top || 'auto') === 'auto' && offScreen(a.get('bottom') ?? ib, 1));
}

/**
 * Text translated clearly off the page to the left or the top: the `translate` property and a transform's
 * `translate()`, `translateX()`, `translateY()`, `translate3d()` (SVG's unitless user units as px), summed, as
 * offPage judges a move (1000px, 100em, or 100vw across). Only a transform of translations alone is judged: a
 * rotation, a scale or a matrix turns or stretches the moves after it (`rotate(180deg) translateX(-9999px)`
 * moves right, where a scroll reaches). A percentage is of the box itself (`translate(-50%, -50%)` centres it)
 * and a move up by vh can leave text further down the page on it: neither is judged. Before 2026-12-07 no
 * translation was found.
 */
function translatedAway(a: Map<string, string>): boolean {
  const [tx = '0', ty = '0'] = (a.get('translate') ?? '0').split(ARGS);
  let x = tx === 'none' ? 0 : offScreenShare(tx, true);
  let y = tx === 'none' ? 0 : offScreenShare(ty, false);
  for (const m of (a.get('transform') ?? '').matchAll(FUNCTION)) {
    const name = m[1]!;
    const n = m[2]!.trim().split(ARGS);
    if (name === 'translate' || name === 'translate3d') {
      x += offScreenShare(n[0], true, true);
      y += n[1] === undefined ? 0 : offScreenShare(n[1], false, true);
    } else if (name === 'translatex') x += offScreenShare(n[0], true, true);
    else if (name === 'translatey') y += offScreenShare(n[0], false, true);
    else return false;
  }
  return x <= -1 || y <= -1;
}

/**
 * inset() whose top and bottom, or left and right, clip 100% or more in percentages or 1000px or more in lengths
 * (a length's share depends on the box: a box text sits in is not that tall), a circle or an ellipse with a radius below 2px.
 */
function clipsAll(clipPath: string | undefined): boolean {
  const m = clipPath === undefined ? null : SHAPE.exec(clipPath);
  if (m === null) return false;
  const args = m[2]!.split(SHAPE_TAIL)[0]!.trim().split(ARGS);
  if (m[1] !== 'inset') return tiny(args[0]) || (m[1] === 'ellipse' && tiny(args[1]));
  const [t, r = t, b = t, l = r] = args;
  return clipsAxis(t!, b!) || clipsAxis(r!, l!);
}

/** Two opposite insets that together clip the whole axis: 100% or more, or 1000px or more (mixed: either part alone). */
function clipsAxis(one: string, other: string): boolean {
  let pct = 0;
  let len = 0;
  for (const v of [one, other]) {
    if (zero(v)) continue;
    if (v.endsWith('%')) pct += factor(v) * 100;
    else len += px(v);
  }
  return pct >= 100 || len >= INSET_LIMIT;
}

/**
 * rect(top, right, bottom, left) whose bottom is not below its top or right not right of its left (`auto`: the
 * box's edge), or whose area, in pixels, is 1 or less (`rect(0, 1px, 1px, 0)`; before 2026-12-07 only no area was found).
 */
function emptyRect(clip: string): boolean {
  const m = RECT.exec(clip);
  if (m === null) return false;
  const sides = m[1]!.trim().split(ARGS);
  const [t, r, b, l] = sides.map((v) => (v === 'auto' ? NaN : parseFloat(v)));
  if (b! <= (Number.isNaN(t) ? 0 : t!) || r! <= (Number.isNaN(l) ? 0 : l!)) return true;
  const [pt, pr, pb, pl] = sides.map(pixels);
  return sides.length === 4 && (pb! - pt!) * (pr! - pl!) <= 1;
}

/**
 * A height (or width) below 2px whose overflow in that axis is not visible: text past the box is clipped or
 * scrolled within nothing. `visible` beside a non-visible other axis computes to `auto`, as CSS says.
 */
function zeroBox(a: Map<string, string>, axis: 'height' | 'width'): boolean {
  if (!(tiny(a.get(axis)) || tiny(a.get(`max-${axis}`)))) return false;
  if (PADDING[axis].some((p) => NONZERO.test(a.get(p) ?? ''))) return false;
  // The shorthand's sides: top, right = top, bottom = top, left = right.
  const [t, r = t, b = t, l = r] = (a.get('padding') ?? '0').split(ARGS);
  if (axis === 'height' ? NONZERO.test(t!) || NONZERO.test(b!) : NONZERO.test(r!) || NONZERO.test(l!)) return false;
  const min = a.get(`min-${axis}`);
  if (min !== undefined && min !== 'auto' && !tiny(min)) return false;
  const both = (a.get('overflow') ?? 'visible').split(ARGS);
  const x = a.get('overflow-x') ?? both[0]!;
  const y = a.get('overflow-y') ?? both[1] ?? both[0]!;
  const [mine, other] = axis === 'height' ? [y, x] : [x, y];
  return UNSHOWN.test(mine) || (mine === 'visible' && TO_AUTO.test(other));
}
