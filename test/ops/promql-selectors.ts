/**
 * Reads what a PromQL expression of the ops/ files asks Prometheus for: each series selector's
 * metric name and the label names it matches on, through Prometheus's own PromQL grammar
 * (@prometheus-io/lezer-promql), so functions, aggregations, `by (...)` groupings, ranges and
 * string literals are never mistaken for metric names. For the ops test only.
 */
import { parser } from '@prometheus-io/lezer-promql';

export interface SeriesSelector {
  /** The metric name as written, e.g. `order_payments_stripe_request_duration_seconds_count`. */
  metric: string;
  /**
   * The label names it must carry: those its matchers name (`{outcome="5xx"}` gives `outcome`)
   * and those every aggregation around it groups by (`sum by (kind) (...)` gives `kind`).
   */
  labels: string[];
}

/** Grafana's interval variables, replaced by a duration so the expression parses as plain PromQL. */
const GRAFANA_INTERVALS = /\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g;

export function plainPromql(expr: string): string {
  return expr.replace(GRAFANA_INTERVALS, '5m');
}

/** Every series selector of the expression, in order; throws naming the position of a syntax error. */
export function seriesSelectors(expr: string): SeriesSelector[] {
  const source = plainPromql(expr);
  const tree = parser.parse(source);
  const found: SeriesSelector[] = [];
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) {
      throw new Error(`PromQL syntax error at ${cursor.from} in: ${expr}`);
    }
    if (cursor.name !== 'VectorSelector') continue;
    const selector = cursor.node;
    const identifier = selector.getChild('Identifier');
    const labels: string[] = [];
    let metric = identifier ? source.slice(identifier.from, identifier.to) : '';
    const matchers = selector.getChild('LabelMatchers');
    for (const matcher of matchers?.getChildren('UnquotedLabelMatcher') ?? []) {
      const name = matcher.getChild('LabelName');
      const value = matcher.getChild('StringLiteral');
      if (!name) continue;
      const labelName = source.slice(name.from, name.to);
      // {__name__="metric"} names the metric instead of a label.
      if (labelName === '__name__' && value) metric = JSON.parse(source.slice(value.from, value.to)) as string;
      else labels.push(labelName);
    }
    if (metric === '') throw new Error(`a selector without a metric name in: ${expr}`);
    for (let outer = selector.parent; outer; outer = outer.parent) {
      const modifier = outer.name === 'AggregateExpr' ? outer.getChild('AggregateModifier') : null;
      if (!modifier?.getChild('By')) continue;
      for (const name of modifier.getChild('GroupingLabels')?.getChildren('LabelName') ?? []) labels.push(source.slice(name.from, name.to));
    }
    found.push({ metric, labels: [...new Set(labels)] });
  } while (cursor.next());
  return found;
}
