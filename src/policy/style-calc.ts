/**
 * CSS `calc()` reduced to the one value it computes (`calc(1px - 1px)` is `0px`, `calc(-9999px)` is
 * `-9999px`), so the hiding checks read it as they read that value: before 2026-12-07 a calc() read as
 * nothing, and `font-size: calc(0px)` or `left: calc(-9999px)` hid text unfound.
 *
 * Only what needs neither the box nor the viewport is computed: numbers and lengths combined by `+`, `-`,
 * `*`, `/` and parentheses, absolute units (style-values.ts's PIXELS) as px, other units (em, %, vw, …)
 * only with themselves, and a zero of any unit dropped from a sum. A calc() that mixes such units
 * (`calc(100% - 2rem)`, `calc(50vw - 200px)`) depends on the page it lays out on, and is what ordinary
 * layouts write: it is left as written and reads as nothing, so it hides nothing, as before. Whatever a
 * browser would reject (no space around `+` or `-`, a division by 0, a number added to a length) is left
 * too: the browser drops the declaration, and what it inherits shows. min(), max() and clamp() are not
 * computed.
 */
import { PIXELS } from './style-values.js';

/** Where a calc() begins, its name's first letter not inside another word (`-webkit-calc(` is not read). */
const CALC = /(?<![\w-])calc\(/gi;
/** A number and its unit, read where the reader stands: each character has one way to match. */
const TERM = /([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)(%|[a-z]*)/iy;
/** Parentheses (and calc() within calc()) deeper than this are not computed: no value needs them, and a long run of them is read once. */
const MAX_DEPTH = 16;
const NESTED = /calc\(/iy;

interface Amount {
  n: number;
  /** "" for a number, "px" for any absolute length, else the unit as written (lower case). */
  unit: string;
}

/** `v` with each calc() it holds that computes to one value replaced by that value; `v` itself when it holds none. */
export function reduceCalc(v: string): string {
  let out = '';
  let from = 0;
  CALC.lastIndex = 0;
  for (let m = CALC.exec(v); m !== null; m = CALC.exec(v)) {
    const reader = new CalcReader(v, m.index + m[0].length);
    const a = reader.sum();
    if (a === undefined || !reader.close()) {
      // Not computed: what it held up to where the reading stopped stays calc() text (read as nothing), so
      // a calc() inside it is not read again (a long run of "calc(" is read once).
      CALC.lastIndex = Math.max(CALC.lastIndex, reader.at);
      continue;
    }
    out += v.slice(from, m.index) + `${a.n}${a.unit}`;
    from = CALC.lastIndex = reader.at;
  }
  return from === 0 ? v : out + v.slice(from);
}

/** One calc()'s expression read from `at` (after its "("), by CSS's precedence; undefined for what is not computed. */
class CalcReader {
  readonly #s: string;
  #depth = 0;
  at: number;

  constructor(s: string, at: number) {
    this.#s = s;
    this.at = at;
  }

  /** Past optional white space and a ")": the expression's end. */
  close(): boolean {
    this.#space();
    return this.#s.charCodeAt(this.at++) === 0x29;
  }

  /** Products joined by " + " and " - " (CSS requires the spaces: `1px-1px` is no sum). */
  sum(): Amount | undefined {
    let a = this.#product();
    while (a !== undefined) {
      const before = this.at;
      if (this.#space() === 0) return a;
      const op = this.#s.charCodeAt(this.at);
      if (op !== 0x2b && op !== 0x2d) {
        this.at = before;
        return a;
      }
      this.at++;
      if (this.#space() === 0) return undefined;
      const b = this.#product();
      a = b === undefined ? undefined : add(a, op === 0x2b ? b : { n: -b.n, unit: b.unit });
    }
    return a;
  }

  #product(): Amount | undefined {
    let a = this.#factor();
    while (a !== undefined) {
      const before = this.at;
      this.#space();
      const op = this.#s.charCodeAt(this.at);
      if (op !== 0x2a && op !== 0x2f) {
        this.at = before;
        return a;
      }
      this.at++;
      this.#space();
      const b = this.#factor();
      if (b === undefined) return undefined;
      if (op === 0x2a) a = a.unit === '' ? { n: a.n * b.n, unit: b.unit } : b.unit === '' ? { n: a.n * b.n, unit: a.unit } : undefined;
      else a = b.unit === '' && b.n !== 0 ? { n: a.n / b.n, unit: a.unit } : undefined;
    }
    return a;
  }

  /** A number with its unit, or a parenthesised sum (a nested calc() is one). */
  #factor(): Amount | undefined {
    this.#space();
    const s = this.#s;
    NESTED.lastIndex = this.at;
    const open = s.charCodeAt(this.at) === 0x28 ? 1 : NESTED.test(s) ? 5 : 0;
    if (open > 0) {
      if (++this.#depth > MAX_DEPTH) return undefined;
      this.at += open;
      this.#space();
      const a = this.sum();
      this.#depth--;
      return a !== undefined && this.close() ? a : undefined;
    }
    TERM.lastIndex = this.at;
    const m = TERM.exec(s);
    if (m === null) return undefined;
    this.at = TERM.lastIndex;
    const unit = m[2]!.toLowerCase();
    const px = PIXELS[unit];
    const n = parseFloat(m[1]!) * (px ?? 1);
    return Number.isFinite(n) ? { n, unit: px === undefined ? unit : 'px' } : undefined;
  }

  /** How many white-space characters were passed. */
  #space(): number {
    const start = this.at;
    const s = this.#s;
    for (let c = s.charCodeAt(this.at); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c; c = s.charCodeAt(++this.at));
    return this.at - start;
  }
}

/** Two amounts of one unit summed; a zero of any unit (but a bare number's) adds nothing; else undefined (needs the page). */
function add(a: Amount, b: Amount): Amount | undefined {
  if (a.unit === b.unit) return { n: a.n + b.n, unit: a.unit };
  if (a.unit !== '' && b.unit !== '') {
    if (b.n === 0) return a;
    if (a.n === 0) return b;
  }
  return undefined;
}
