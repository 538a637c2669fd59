/** Hooks that wait for later (a pod not ready yet) are kept on their Backup or Restore as a JSON list in an annotation. */

/** The list under `key`; none when the annotation is absent or not a JSON list. */
export function readJsonListAnnotation<T>(annotations: Readonly<Record<string, string>> | undefined, key: string): T[] {
  const text = annotations?.[key];
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}

/** Writes the list under `key`, or removes the annotation when the list is empty. */
export function writeJsonListAnnotation<T>(annotations: Record<string, string>, key: string, list: readonly T[]): void {
  if (list.length) annotations[key] = JSON.stringify(list);
  else delete annotations[key];
}
