/**
 * Label selectors: metav1.LabelSelector objects evaluated as the API server does (shared by backup and restore
 * filtering), and parsed from Kubernetes' text form (flags, plugins' resource selectors).
 */
export interface LabelSelectorLike {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] | undefined }[] | undefined;
}

/** Whether `labels` match `selector`; an empty selector matches everything, an unknown operator nothing. */
export function matchesLabelSelector(labels: Readonly<Record<string, string>> | undefined, selector: LabelSelectorLike): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(l[req.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[req.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

export class InvalidLabelSelectorError extends Error {}

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

/** A label key (or annotation key) the API server accepts: an optional DNS-subdomain prefix and a name. */
export const isLabelKey = (k: string): boolean => KEY.test(k) && (k.split('/')[0]?.length ?? 0) <= 253;
/** A label value the API server accepts (empty included). */
export const isLabelValue = (v: string): boolean => VALUE.test(v);

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

/** A selector in Kubernetes' text form (`app=web,tier!=cache,env in (a,b),!legacy,debug`) as an object. */
export function parseLabelSelectorText(text: string): LabelSelectorObject {
  const selector: LabelSelectorObject = {};
  const bad = (why: string): never => {
    throw new InvalidLabelSelectorError(`invalid selector "${text}": ${why}`);
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
