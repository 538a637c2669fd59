/**
 * Label selectors as users type them (`app=web,tier!=cache,env in (a,b),!legacy,debug`) turned into
 * metav1.LabelSelector objects, and back into text for tables (Velero's FormatLabelSelector).
 */
import { UsageError } from '../base/errors.js';
import { InvalidLabelSelectorError, parseLabelSelectorText, type LabelSelectorObject } from '../api/label-selectors.js';

export type { SelectorRequirement, LabelSelectorObject } from '../api/label-selectors.js';

/** Parses a selector typed in a flag; a malformed one is a usage error naming the flag. */
export function parseLabelSelector(flag: string, text: string): LabelSelectorObject {
  try {
    return parseLabelSelectorText(text);
  } catch (err) {
    if (err instanceof InvalidLabelSelectorError) throw new UsageError(flag, err.message);
    throw err;
  }
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
