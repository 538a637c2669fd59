/**
 * Prometheus metrics as shared infrastructure (docs/metrics.md): a role declares its metrics as a table of
 * definitions, its decisions return MetricEffects (plain data, so they are unit-tested without a registry), and a
 * MetricsRegistry built from the table applies them through prom-client and renders the text format for /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One metric family: what /metrics shows for it (name, HELP, TYPE, label names, histogram buckets). */
export interface MetricDefinition {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly labelNames: readonly string[];
  /** Upper bounds of a histogram's buckets (+Inf is implied). */
  readonly buckets?: readonly number[];
}

export type MetricLabels = Readonly<Record<string, string>>;

/**
 * What a decision asks of the registry:
 * - `inc` adds to a counter (`value` defaults to 1; 0 makes the series appear);
 * - `set` sets a gauge; `setMax` sets it only when higher than the current value (or absent);
 * - `init` makes a series appear without changing it: counters at 0, gauges at `value` unless already set;
 * - `observe` puts a value into a histogram;
 * - `remove` drops one series (a deleted schedule, location).
 */
export type MetricEffect =
  | { op: 'inc'; metric: string; labels: MetricLabels; value?: number }
  | { op: 'set'; metric: string; labels: MetricLabels; value: number }
  | { op: 'setMax'; metric: string; labels: MetricLabels; value: number }
  | { op: 'init'; metric: string; labels: MetricLabels; value?: number }
  | { op: 'observe'; metric: string; labels: MetricLabels; value: number }
  | { op: 'remove'; metric: string; labels: MetricLabels };

/** Velero's duration buckets (1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 4h), in seconds. */
export const VELERO_DURATION_BUCKETS: readonly number[] = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 14400];

/** One metric family split by `labelNames`; a histogram counts durations, in Velero's buckets. */
export function defineMetric(name: string, type: MetricType, help: string, labelNames: readonly string[]): MetricDefinition {
  return type === 'histogram' ? { name, help, type, labelNames, buckets: VELERO_DURATION_BUCKETS } : { name, help, type, labelNames };
}

type AnyMetric = Counter | Gauge | Histogram;

export interface MetricsRegistryOptions {
  /** Also export the process's own metrics (process_*, nodejs_*), as Velero's Go server exports process_* and go_*. */
  processMetrics?: boolean;
}

export class MetricsRegistry {
  readonly registry = new Registry();
  private readonly metrics = new Map<string, { def: MetricDefinition; metric: AnyMetric }>();
  /** Gauge series that hold a value, so `init` never overwrites one. */
  private readonly setGauges = new Map<string, number>();
  private readonly beforeScrape: (() => void)[] = [];

  constructor(definitions: readonly MetricDefinition[], opts: MetricsRegistryOptions = {}) {
    for (const def of definitions) {
      if (this.metrics.has(def.name)) throw new Error(`metric ${def.name} is defined twice`);
      const common = { name: def.name, help: def.help, labelNames: [...def.labelNames], registers: [this.registry] };
      const metric =
        def.type === 'counter'
          ? new Counter(common)
          : def.type === 'gauge'
            ? new Gauge(common)
            : new Histogram({ ...common, buckets: [...(def.buckets ?? VELERO_DURATION_BUCKETS)] });
      this.metrics.set(def.name, { def, metric });
    }
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  apply(effects: readonly MetricEffect[]): void {
    for (const e of effects) this.applyOne(e);
  }

  /** `compute` runs before every scrape (gauges counted from a cache, such as the number of backups). */
  onScrape(compute: () => void): void {
    this.beforeScrape.push(compute);
  }

  /** The current value of a counter or gauge series, undefined when it has none. */
  async value(metric: string, labels: MetricLabels): Promise<number | undefined> {
    const { def, metric: m } = this.lookup(metric);
    if (def.type === 'histogram') throw new Error(`value of histogram ${metric}: read its text instead`);
    const key = labelKey(labels);
    return (await m.get()).values.find((v) => labelKey(v.labels as MetricLabels) === key)?.value;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text format of every metric. */
  async text(): Promise<string> {
    for (const compute of this.beforeScrape) compute();
    return this.registry.metrics();
  }

  private lookup(metric: string): { def: MetricDefinition; metric: AnyMetric } {
    const found = this.metrics.get(metric);
    if (!found) throw new Error(`metric ${metric} is not defined`);
    return found;
  }

  private applyOne(e: MetricEffect): void {
    const { def, metric } = this.lookup(e.metric);
    const labels = { ...e.labels };
    const seriesKey = `${e.metric}|${labelKey(labels)}`;
    switch (e.op) {
      case 'inc':
        expectType(def, e.op, 'counter');
        (metric as Counter).inc(labels, e.value ?? 1);
        return;
      case 'set':
        expectType(def, e.op, 'gauge');
        (metric as Gauge).set(labels, e.value);
        this.setGauges.set(seriesKey, e.value);
        return;
      case 'setMax': {
        expectType(def, e.op, 'gauge');
        const current = this.setGauges.get(seriesKey);
        if (current !== undefined && current >= e.value) return;
        (metric as Gauge).set(labels, e.value);
        this.setGauges.set(seriesKey, e.value);
        return;
      }
      case 'init':
        if (def.type === 'counter') (metric as Counter).inc(labels, 0);
        else if (def.type === 'histogram') (metric as Histogram).zero(labels);
        else if (!this.setGauges.has(seriesKey)) {
          (metric as Gauge).set(labels, e.value ?? 0);
          this.setGauges.set(seriesKey, e.value ?? 0);
        }
        return;
      case 'observe':
        expectType(def, e.op, 'histogram');
        (metric as Histogram).observe(labels, e.value);
        return;
      case 'remove':
        metric.remove(labels);
        this.setGauges.delete(seriesKey);
        return;
    }
  }
}

function expectType(def: MetricDefinition, op: string, type: MetricType): void {
  if (def.type !== type) throw new Error(`${op} on ${def.type} ${def.name}: needs a ${type}`);
}

function labelKey(labels: MetricLabels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

/** Whole seconds between two RFC 3339 times, as Velero truncates durations; undefined when either is missing or unordered. */
export function secondsBetween(start: string | null | undefined, end: string | null | undefined): number | undefined {
  if (!start || !end) return undefined;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : undefined;
}
