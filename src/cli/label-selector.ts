/**
 * Label selectors as users type them (`app=web,tier!=cache,env in (a,b),!legacy,debug`) turned into
 * metav1.LabelSelector objects, and back into text for tables (Velero's FormatLabelSelector).
 */
import { UsageError } from '../base/errors.js';

export interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: SelectorRequirement[];
}

const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Splits on commas that are not inside parentheses. */
function terms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter(Boolean);
}

export function parseLabelSelector(flag: string, text: string): LabelSelectorObject {
  const selector: LabelSelectorObject = {};
  const bad = (why: string): never => {
    throw new UsageError(flag, `invalid selector "${text}": ${why}`);
  };
  const checkKey = (k: string) => (KEY.test(k) ? k : bad(`"${k}" is not a valid label key`));
  const checkValue = (v: string) => (VALUE.test(v) ? v : bad(`"${v}" is not a valid label value`));
  for (const term of terms(text)) {
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term))) {
      const values = (m[3] as string).split(',').map((v) => checkValue(v.trim()));
      (selector.matchExpressions ??= []).push({ key: checkKey(m[1] as string), operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = /^([^=!\s]+)\s*!=\s*(\S*)$/.exec(term))) {
      (selector.matchExpressions ??= []).push({ key: checkKey(m[1] as string), operator: 'NotIn', values: [checkValue(m[2] as string)] });
    } else if ((m = /^([^=!\s]+)\s*==?\s*(\S*)$/.exec(term))) {
      const key = checkKey(m[1] as string);
      if (selector.matchLabels?.[key] !== undefined) bad(`"${key}" given twice`);
      (selector.matchLabels ??= {})[key] = checkValue(m[2] as string);
    } else if ((m = /^!\s*(\S+)$/.exec(term))) {
      (selector.matchExpressions ??= []).push({ key: checkKey(m[1] as string), operator: 'DoesNotExist' });
    } else if (/^\S+$/.test(term)) {
      (selector.matchExpressions ??= []).push({ key: checkKey(term), operator: 'Exists' });
    } else {
      bad(`cannot parse "${term}"`);
    }
  }
  if (!selector.matchLabels && !selector.matchExpressions) bad('empty selector');
  return selector;
}

/** `a=b or c=d` (Velero's --or-selector) → one selector per alternative. */
export function parseOrSelectors(flag: string, text: string): LabelSelectorObject[] {
  return text.split(/\s+or\s+/).map((part) => parseLabelSelector(flag, part));
}

export function formatLabelSelector(selector: LabelSelectorObject | null | undefined): string {
  if (!selector) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) parts.push(`${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(',') : '<none>';
}
