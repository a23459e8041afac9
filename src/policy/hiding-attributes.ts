/**
 * Whether an element's attributes hide it (and what it holds), as the browser applies them (style-as-applied.ts):
 * HTML's `hidden`, a style, SVG's presentation attributes (`display="none"`, `transform="scale(0)"`). One value
 * that hides is looked for over the whole attribute text (HIDING: more, never less, than the browser applies);
 * values that hide together or that another can undo, by the declarations the element has (style-declarations.ts).
 * Without a parser or stylesheets, as hidden-markup.ts reads tags.
 */
import { asApplied } from './style-as-applied.js';
import { styleDeclarations } from './style-declarations.js';

/**
 * Attributes and declarations that hide by one value. `visibility: collapse` hides as `hidden` does (but in a
 * table), and an opacity below 0 is clamped to 0: before 2026-12-06 both hid text unfound.
 */
const HIDING =
  /(?:^|[\s/])hidden(?:\s|=|\/|$)|display\s*[:=]\s*["']?none|visibility\s*[:=]\s*["']?(?:hidden|collapse)|(?:^|[\s/])type\s*=\s*["']?hidden\b|(?<![\w-])opacity\s*[:=]\s*["']?(?:0+(?:\.0*)?|\.0+|-(?:\d+\.?\d*|\.\d+))%?(?![\w.%])|(?<![\w-])font-size\s*[:=]\s*["']?(?:0+(?:\.0*)?|\.0+)(?:[a-z]+|%)?(?![\w.%])/i;
/** Only attributes naming one of these can shrink, clip or collapse an element to nothing (collapsed). */
const COLLAPSING = /scale|matrix|clip|height|width/i;

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

/** Whether `attrs` (a tag's attribute text, as written) hide the element, once decoded as the browser decodes them. */
export function hidingAttributes(attrs: string): boolean {
  const applied = asApplied(attrs);
  return HIDING.test(applied) || (COLLAPSING.test(applied) && collapsed(styleDeclarations(attrs)));
}

/** A number, a length or a percentage that is zero (`0`, `-0.0`, `0px`, `0%`): NaN is not. */
function zero(v: string | undefined): boolean {
  return v !== undefined && v !== '' && parseFloat(v) === 0;
}

/**
 * Hidden by a value that leaves nothing to see: a transform or `scale` with a 2D factor of 0 (scale(0),
 * scaleX(0), a matrix of determinant 0), a `clip-path` that clips all (inset 50% from two sides, a circle or
 * ellipse of radius 0), a `clip` rect with no area, or a height or width of 0 whose overflow does not show.
 * Before 2026-12-06 each hid text unfound.
 */
function collapsed(a: Map<string, string>): boolean {
  const transform = a.get('transform');
  if (transform !== undefined && scaledAway(transform)) return true;
  const scale = a.get('scale')?.split(ARGS);
  if (scale !== undefined && (zero(scale[0]) || zero(scale[1]))) return true;
  if (clipsAll(a.get('clip-path')) || clipsAll(a.get('-webkit-clip-path'))) return true;
  const clip = a.get('clip');
  if (clip !== undefined && emptyRect(clip)) return true;
  return zeroBox(a, 'height') || zeroBox(a, 'width');
}

function scaledAway(transform: string): boolean {
  for (const m of transform.matchAll(FUNCTION)) {
    const name = m[1]!;
    const n = m[2]!.trim().split(ARGS).map(parseFloat);
    if (name === 'scale' || name === 'scale3d' ? n[0] === 0 || n[1] === 0 : name === 'scalex' || name === 'scaley' ? n[0] === 0 : name === 'matrix' && n.length === 6 && n[0]! * n[3]! - n[1]! * n[2]! === 0) return true;
  }
  return false;
}

/** inset() with top+bottom or left+right 100% or more (percentages only: a length depends on the box), circle(0), ellipse with a radius 0. */
function clipsAll(clipPath: string | undefined): boolean {
  const m = clipPath === undefined ? null : SHAPE.exec(clipPath);
  if (m === null) return false;
  const args = m[2]!.split(SHAPE_TAIL)[0]!.trim().split(ARGS);
  if (m[1] !== 'inset') return zero(args[0]) || (m[1] === 'ellipse' && zero(args[1]));
  const [t, r = t, b = t, l = r] = args.map((v) => (zero(v) ? 0 : v.endsWith('%') ? parseFloat(v) : NaN));
  return t! + b! >= 100 || r! + l! >= 100;
}

/** rect(top, right, bottom, left) whose bottom is not below its top or right not right of its left (`auto`: the box's edge). */
function emptyRect(clip: string): boolean {
  const m = RECT.exec(clip);
  if (m === null) return false;
  const [t, r, b, l] = m[1]!.trim().split(ARGS).map((v) => (v === 'auto' ? NaN : parseFloat(v)));
  return b! <= (Number.isNaN(t) ? 0 : t!) || r! <= (Number.isNaN(l) ? 0 : l!);
}

/**
 * A height (or width) of 0 whose overflow in that axis is not visible: text past the box is clipped or
 * scrolled within nothing. `visible` beside a non-visible other axis computes to `auto`, as CSS says.
 */
function zeroBox(a: Map<string, string>, axis: 'height' | 'width'): boolean {
  if (!(zero(a.get(axis)) || zero(a.get(`max-${axis}`)))) return false;
  if (PADDING[axis].some((p) => NONZERO.test(a.get(p) ?? ''))) return false;
  // The shorthand's sides: top, right = top, bottom = top, left = right.
  const [t, r = t, b = t, l = r] = (a.get('padding') ?? '0').split(ARGS);
  if (axis === 'height' ? NONZERO.test(t!) || NONZERO.test(b!) : NONZERO.test(r!) || NONZERO.test(l!)) return false;
  const min = a.get(`min-${axis}`);
  if (min !== undefined && min !== 'auto' && !zero(min)) return false;
  const both = (a.get('overflow') ?? 'visible').split(ARGS);
  const x = a.get('overflow-x') ?? both[0]!;
  const y = a.get('overflow-y') ?? both[1] ?? both[0]!;
  const [mine, other] = axis === 'height' ? [y, x] : [x, y];
  return UNSHOWN.test(mine) || (mine === 'visible' && TO_AUTO.test(other));
}
