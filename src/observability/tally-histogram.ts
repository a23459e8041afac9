import type { RequestTally, TallyExemplar } from './request-tally.js';

/** A value of a metric as prom-client's registry renders it (its `getForPromString` shape). */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Readonly<Record<string, string>>;
  value: number;
  metricName: string;
  /**
   * As prom-client sets it: a bucket's exemplar, or null on a bucket without one (+Inf: undefined while
   * it has none, where exemplars are kept); undefined on _sum and _count.
   */
  exemplar: TallyExemplar | null | undefined;
}

interface Exported<V> {
  name: string;
  help: string;
  type: 'histogram';
  values: V[];
  aggregator: 'sum';
}

/**
 * The request-duration histogram read from a RequestTally, registered on prom-client's registry as a
 * metric of its own: the registry asks a metric for its values (`getForPromString`, `get`) and renders
 * them, so the exposition is the registry's, line for line what prom-client's Histogram gave for the
 * same observations (test/unit/observability/request-tally.test.ts compares the two, with exemplars and
 * without). The registry shows the exemplars in the OpenMetrics format only.
 */
export class TallyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #tally: RequestTally;

  constructor(name: string, help: string, tally: RequestTally) {
    this.name = name;
    this.help = help;
    this.#tally = tally;
  }

  /** As prom-client's Histogram: per label set its cumulative buckets, +Inf, _sum and _count. */
  getForPromString(): Exported<ExportedValue> {
    const bounds = this.#tally.bounds;
    const bucket = `${this.name}_bucket`;
    const values: ExportedValue[] = [];
    for (const cell of this.#tally.requests()) {
      // A label set whose requests brought no duration (not a number) has no series, as with prom-client.
      if (cell.observed === 0) continue;
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += cell.buckets[i]!;
        values.push({ labels: { le: bounds[i]! }, sharedLabels: cell.labels, value: acc, metricName: bucket, exemplar: cell.exemplars?.[i] ?? null });
      }
      const inf = cell.exemplars ? (cell.exemplars[bounds.length] ?? undefined) : null;
      values.push({ labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.observed, metricName: bucket, exemplar: inf });
      values.push({ labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: cell.labels, value: cell.observed, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's `get`: each value's labels with its label set's merged in. */
  get(): Exported<Omit<ExportedValue, 'sharedLabels'>> {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, labels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })) };
  }

  /** The registry's resetMetrics: the tally forgets its counts, so the two counters read from it start over too. */
  reset(): void {
    this.#tally.reset();
  }
}
