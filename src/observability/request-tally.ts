import { clipped } from './clipped.js';

/**
 * One answered client request, as the request metrics count it (SessionObserver.requestDone reports it as
 * RequestDone). `era`: legacy (a session) or modern (a 2026-07-28 stateless request). A type, not an
 * interface: tests read it as a plain record.
 */
export type AnsweredRequest = {
  method: string;
  endpoint: string;
  upstream: string;
  outcome: string;
  seconds: number;
  tool: string | undefined;
  era: 'legacy' | 'modern';
};

/** One label set of the request metrics: its labels as Prometheus shows them, and what was counted. */
export interface RequestCell {
  readonly labels: Readonly<Record<'method' | 'endpoint' | 'upstream' | 'outcome' | 'protocol_era', string>>;
  /** Requests answered (switchboard_requests_total). */
  count: number;
  /** Durations observed (the histogram's _count), and their sum. */
  observed: number;
  sum: number;
  /** Observations per upper bound (not cumulative), in the bounds' order; above the last, none. */
  readonly buckets: Float64Array;
  /**
   * With exemplars: per bucket (the bounds' order, then +Inf) the last observation made inside a sampled
   * span, as prom-client's Histogram keeps them; null where there is none yet.
   */
  readonly exemplars: Array<TallyExemplar | null> | undefined;
}

/**
 * The most tool label sets (tool × outcome) kept apart; a call of a tool first seen beyond them is counted
 * under the tool OTHER_TOOL. A tool label is a name an upstream listed, which a hostile or dynamic upstream
 * chooses (per-session instances can list new names for every session); the cells are never let go.
 */
export const MAX_TOOL_CELLS = 1000;
/** No MCP tool name has parentheses: no real tool's series is merged into it. */
export const OTHER_TOOL = '(other)';
/** The longest tool label: a listed name can be of any length (it is shortened only where shown), as audit lines and spans cut it. */
const MAX_TOOL_LABEL = 256;

/** An OpenMetrics exemplar in the shape prom-client's registry renders (`# {labels} value timestamp`). */
export interface TallyExemplar {
  labelSet: Readonly<Record<string, string>>;
  value: number;
  /** Seconds since the epoch, as prom-client writes it. */
  timestamp: number;
}

export interface ToolCell {
  readonly labels: Readonly<Record<'tool' | 'outcome', string>>;
  count: number;
}

/**
 * The three metrics every answered request updates (switchboard_requests_total, the request-duration
 * histogram, switchboard_tool_calls_total), counted here in cells of their own: one per label set,
 * found by one string key, and read by the metrics when Prometheus scrapes (metrics.ts). prom-client
 * would, on every update, validate the labels, hash them into a key (a sorted walk over the names) and,
 * for the histogram, build a closure and a label/value pair: about 2 µs of a call's CPU for the three
 * (a loop of 500,000 updates each), where this costs a key and three additions. Label sets are bounded
 * by configuration and the protocol, as the metrics' are. With tracing on, the histogram's buckets also
 * keep exemplars here: prom-client's Histogram with exemplars hashed the labels twice per observation
 * and built a closure and label objects (callgrind: ~4,000 instructions of a traced call).
 */
export class RequestTally {
  readonly #bounds: readonly number[];
  readonly #exemplars: boolean;
  readonly #requests = new Map<string, RequestCell>();
  readonly #tools = new Map<string, ToolCell>();
  /**
   * The cells counted last. Calls come in runs of one label set (one endpoint, method, upstream and
   * outcome), and a cell whose labels are the request's is found by five string compares, where the
   * map's key is a string built per call, flattened and hashed to be looked up (callgrind, Node 20:
   * ~5,000 instructions a call for the two maps).
   */
  #lastRequest: RequestCell | undefined;
  #lastTool: ToolCell | undefined;

  /** `bounds`: the histogram's upper bounds, ascending. `exemplars`: the buckets keep exemplars (tracing on). */
  constructor(bounds: readonly number[], exemplars = false) {
    this.#bounds = bounds;
    this.#exemplars = exemplars;
  }

  get bounds(): readonly number[] {
    return this.#bounds;
  }

  /**
   * Counts one answered request. `exemplar`: the ids of the sampled span it was answered in (trace_id,
   * span_id), kept as its bucket's exemplar when the tally keeps them; the object is kept as given.
   */
  done(r: AnsweredRequest, exemplar?: Readonly<Record<string, string>>): void {
    let cell = this.#lastRequest;
    const l = cell?.labels;
    if (!cell || l!.method !== r.method || l!.endpoint !== r.endpoint || l!.upstream !== r.upstream || l!.outcome !== r.outcome || l!.protocol_era !== r.era) {
      this.#lastRequest = cell = this.#requestCell(r);
    }
    cell.count += 1;
    // A duration that is not a number is not observed (prom-client threw on it, inside the request's answer).
    if (Number.isFinite(r.seconds)) {
      cell.observed += 1;
      cell.sum += r.seconds;
      const i = this.#bucketOf(r.seconds);
      if (i >= 0) cell.buckets[i]! += 1;
      if (exemplar !== undefined && cell.exemplars) {
        // Above the last bound: the +Inf bucket's (prom-client keeps it under -1 and shows it there).
        const at = i >= 0 ? i : this.#bounds.length;
        const e = cell.exemplars[at];
        const timestamp = Date.now() / 1000;
        if (e) {
          e.labelSet = exemplar;
          e.value = r.seconds;
          e.timestamp = timestamp;
        } else {
          cell.exemplars[at] = { labelSet: exemplar, value: r.seconds, timestamp };
        }
      }
    }
    if (r.tool === undefined) return;
    let tool = this.#lastTool;
    if (!tool || tool.labels.tool !== r.tool || tool.labels.outcome !== r.outcome) {
      const toolKey = `${r.tool}\u0000${r.outcome}`;
      tool = this.#tools.get(toolKey) ?? this.#toolCell(toolKey, r.tool, r.outcome);
      this.#lastTool = tool;
    }
    tool.count += 1;
  }

  /** A new tool cell (made once per label set, off the per-call path), or OTHER_TOOL's once MAX_TOOL_CELLS are kept. */
  #toolCell(key: string, name: string, outcome: string): ToolCell {
    let tool = name;
    if (this.#tools.size >= MAX_TOOL_CELLS) {
      tool = OTHER_TOOL;
      key = `${OTHER_TOOL}\u0000${outcome}`;
      const other = this.#tools.get(key);
      if (other) return other;
    }
    const cell: ToolCell = { labels: { tool: clipped(tool, MAX_TOOL_LABEL), outcome }, count: 0 };
    this.#tools.set(key, cell);
    return cell;
  }

  #requestCell(r: AnsweredRequest): RequestCell {
    const key = `${r.method}\u0000${r.endpoint}\u0000${r.upstream}\u0000${r.outcome}\u0000${r.era}`;
    let cell = this.#requests.get(key);
    if (!cell) {
      // The labels in prom-client's order for this metric (what the exposition showed before).
      const labels = { method: r.method, endpoint: r.endpoint, upstream: r.upstream, outcome: r.outcome, protocol_era: r.era };
      const exemplars = this.#exemplars ? new Array<TallyExemplar | null>(this.#bounds.length + 1).fill(null) : undefined;
      cell = { labels, count: 0, observed: 0, sum: 0, buckets: new Float64Array(this.#bounds.length), exemplars };
      this.#requests.set(key, cell);
    }
    return cell;
  }

  /** Forgets every count (the registry's resetMetrics, through the histogram's reset). */
  reset(): void {
    this.#requests.clear();
    this.#tools.clear();
    this.#lastRequest = undefined;
    this.#lastTool = undefined;
  }

  requests(): IterableIterator<RequestCell> {
    return this.#requests.values();
  }

  tools(): IterableIterator<ToolCell> {
    return this.#tools.values();
  }

  /** The first bound the value is within, as prom-client finds it; -1 above the last. */
  #bucketOf(value: number): number {
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]!) return i;
    return -1;
  }
}
