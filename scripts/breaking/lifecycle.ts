// Our deprecation and stability policy, for operations, parameters and schema properties:
// a deprecated element carries a readable x-sunset, that date may not move earlier or
// vanish, it is removed only on or after it, and stable may not become experimental.
import { type Context, inHead, type Place } from './context.js';
import { keyAt, type Located, type Node } from './document.js';

const STABILITY = ['stable', 'experimental'];
const isDate = (v: unknown): v is string => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v));

/** x-sunset as YAML may read it: a quoted string, or a date YAML parsed itself. */
function sunsetOf(node: Node): unknown {
  const value = node['x-sunset'];
  return value instanceof Date ? value.toISOString().slice(0, 10) : value;
}

/** Compares the lifecycle markers of an element present on both sides. `prefix` is `api`, `request-parameter`, ... */
export function compareLifecycle(ctx: Context, prefix: string, base: Node, located: Located, name: string): void {
  const head = located.node;
  const at = (key: string): Place => inHead(keyAt(located, key));
  const stability = head['x-stability'];
  if (prefix === 'api' && stability !== undefined && !STABILITY.includes(String(stability))) {
    ctx.report('api-invalid-stability-level', at('x-stability'), `${name}: x-stability is ${String(stability)}; it must be one of ${STABILITY.join(', ')}`);
  }
  if (prefix !== 'request-parameter' && base['x-stability'] !== 'experimental' && stability === 'experimental') {
    ctx.report(`${prefix}-stability-decreased`, at('x-stability'), `${name}: a stable ${prefix === 'api' ? 'operation' : 'property'} cannot become experimental`);
  }
  if (head.deprecated !== true) return;
  const sunset = sunsetOf(head);
  const before = sunsetOf(base);
  const wasDeprecated = base.deprecated === true;
  if (sunset === undefined) {
    if (!wasDeprecated) ctx.report(`${prefix}-deprecated-sunset-missing`, at('deprecated'), `${name}: deprecated without an x-sunset date`);
    else if (before !== undefined) ctx.report(`${prefix}-sunset-deleted`, at('deprecated'), `${name}: x-sunset ${String(before)} was removed while still deprecated`);
  } else if (!isDate(sunset)) {
    ctx.report(`${prefix}-sunset-parse`, at('x-sunset'), `${name}: x-sunset ${String(sunset)} is not a YYYY-MM-DD date`);
  } else if (wasDeprecated && isDate(before) && sunset < before) {
    ctx.report(`${prefix}-sunset-date-changed-too-small`, at('x-sunset'), `${name}: x-sunset moved earlier, from ${before} to ${sunset}`);
  } else if (!wasDeprecated && sunset < ctx.today) {
    ctx.report(`${prefix}-sunset-date-too-small`, at('x-sunset'), `${name}: newly deprecated with x-sunset ${sunset}, before today (${ctx.today})`);
  }
}

/** Whether the element may go: deprecated, with a sunset that is today or past. */
export function mayBeRemoved(ctx: Context, base: Node): boolean {
  const sunset = sunsetOf(base);
  return base.deprecated === true && isDate(sunset) && sunset <= ctx.today;
}

/** Why removing the element is breaking, to follow "removed", or undefined when it may go. */
export function removalProblem(ctx: Context, base: Node): string | undefined {
  if (mayBeRemoved(ctx, base)) return undefined;
  if (base.deprecated !== true) return 'without being deprecated first';
  return `while deprecated, before its sunset (${String(sunsetOf(base) ?? 'no x-sunset')}); today is ${ctx.today}`;
}
