/** Evaluating metav1.LabelSelector objects (as the API server does), shared by backup and restore filtering. */
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
