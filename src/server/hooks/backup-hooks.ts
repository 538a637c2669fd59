/**
 * Which exec hooks run in a pod around its backup, with Velero's rules (pure; the pod is the backed-up item):
 *   - a pod's annotations win: with `<phase>.hook.backup.velero.io/command` set (for pre also the legacy
 *     `hook.backup.velero.io/command`), that one hook runs and the spec's hooks do not, for that phase;
 *   - otherwise every `spec.hooks.resources[]` entry whose namespaces, resources (pods) and label selector match
 *     contributes its `pre` or `post` list, in order;
 *   - defaults: the pod's first container, onError Fail, timeout 30s; a command annotation that is a JSON array is
 *     the argv, else the whole text is one argument.
 * Where Velero logs a bad annotation and carries on with a default, cairn reports it: a timeout that is not a
 * duration, an on-error that is neither Continue nor Fail, or a container the pod does not have make that hook fail
 * with an error naming the annotation or field (it is not run).
 */
import {
  Annotations,
  HookErrorMode,
  matchesLabelSelector,
  parseDurationNanos,
  type BackupResourceHookSpec,
  type BackupSpec,
  type LabelSelectorLike,
} from '../../api/index.js';
import { IncludesExcludes, includesExcludesProblems, labelSelectorProblems } from '../backup/filters.js';

export type BackupHookPhase = 'pre' | 'post';

/** Velero's default exec hook timeout. */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;

/**
 * A hook's duration in whole milliseconds, a fraction rounded up: a timeout the user set, however short (`500us`),
 * stays a timeout of its own and never becomes 0, which would mean "not set" and take the 30 s default.
 */
function hookDurationMs(nanos: bigint): number {
  return Number((nanos + 999_999n) / 1_000_000n);
}

/** A hook's duration field or annotation in milliseconds; 0 when not set, and a problem noted when it is not a duration. */
export function hookDurationField(text: string | undefined, field: string, problems: string[]): number {
  if (!text) return 0;
  const nanos = parseDurationNanos(text);
  if (nanos === undefined || nanos < 0n) {
    problems.push(`${field}: "${text}" is not a duration such as 30s or 5m`);
    return 0;
  }
  return hookDurationMs(nanos);
}
/** The hook name of annotation hooks (Velero's). */
export const ANNOTATION_HOOK_NAME = '<from-annotation>';

/** One hook, ready to run (or already known to fail: `problem`). */
export interface ResolvedExecHook {
  /** The spec entry's name, or `<from-annotation>`. */
  name: string;
  source: 'annotation' | 'spec';
  /** Position in its list (Velero's hook tracker key). */
  index: number;
  container: string;
  command: string[];
  onError: HookErrorMode;
  timeoutMs: number;
  /** Why the hook cannot run as written; it then counts as attempted and failed. */
  problem?: string;
}

/** The parts of a pod the hooks need. */
export interface HookPod {
  metadata: { name: string; namespace?: string | undefined; labels?: Record<string, string> | undefined; annotations?: Record<string, string> | undefined };
  spec?: { containers?: readonly { name: string }[] | undefined } | undefined;
}

const ANNOTATION_KEYS = {
  pre: {
    command: Annotations.PreBackupHookCommand,
    container: Annotations.PreBackupHookContainer,
    onError: Annotations.PreBackupHookOnError,
    timeout: Annotations.PreBackupHookTimeout,
  },
  post: {
    command: Annotations.PostBackupHookCommand,
    container: Annotations.PostBackupHookContainer,
    onError: Annotations.PostBackupHookOnError,
    timeout: Annotations.PostBackupHookTimeout,
  },
  legacy: {
    command: Annotations.LegacyBackupHookCommand,
    container: Annotations.LegacyBackupHookContainer,
    onError: Annotations.LegacyBackupHookOnError,
    timeout: Annotations.LegacyBackupHookTimeout,
  },
} as const;

/** Velero's parseStringToCommand: a JSON array is the argv, anything else one argument. */
export function commandFromAnnotation(text: string): string[] {
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((p) => typeof p === 'string')) return parsed;
    } catch {
      /* not JSON: the text as one argument, as Velero */
    }
  }
  return [text];
}

/** A hook's on-error annotation (`key`): Fail when unset; anything but Continue or Fail is a problem (and Fail). */
export function onErrorFromAnnotation(annotations: Readonly<Record<string, string>>, key: string, problems: string[]): HookErrorMode {
  const text = annotations[key];
  if (!text) return HookErrorMode.Fail;
  if (text === HookErrorMode.Continue || text === HookErrorMode.Fail) return text;
  problems.push(`annotation ${key}: "${text}" is neither Continue nor Fail`);
  return HookErrorMode.Fail;
}

function containerProblem(pod: HookPod, container: string, field: string): string | undefined {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  if (!names.length) return `pod ${podName(pod)} has no containers to run the hook in`;
  if (!names.includes(container)) return `${field}: container "${container}" does not exist in pod ${podName(pod)} (it has ${names.join(', ')})`;
  return undefined;
}

export function podName(pod: HookPod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
}

function firstContainer(pod: HookPod): string {
  return pod.spec?.containers?.[0]?.name ?? '';
}

/** The problems found in a hook's fields, kept on it: it then counts as attempted and failed. */
export function problemField(problems: readonly string[]): Pick<ResolvedExecHook, 'problem'> {
  return problems.length ? { problem: problems.join('; ') } : {};
}

/** What every annotation hook is: the one hook of its pod and phase, its command as the annotation writes it. */
export function annotationHookFields(commandText: string, container: string, onError: HookErrorMode): Pick<ResolvedExecHook, 'name' | 'source' | 'index' | 'container' | 'command' | 'onError'> {
  return { name: ANNOTATION_HOOK_NAME, source: 'annotation', index: 0, container, command: commandFromAnnotation(commandText), onError };
}

/** The annotation hook of a phase, or undefined when the pod has none. */
export function annotationHook(pod: HookPod, phase: BackupHookPhase): ResolvedExecHook | undefined {
  const annotations = pod.metadata.annotations ?? {};
  let keys: (typeof ANNOTATION_KEYS)[keyof typeof ANNOTATION_KEYS] = ANNOTATION_KEYS[phase];
  if (!annotations[keys.command] && phase === 'pre' && annotations[ANNOTATION_KEYS.legacy.command]) keys = ANNOTATION_KEYS.legacy;
  const commandText = annotations[keys.command];
  if (!commandText) return undefined;
  const problems: string[] = [];
  const container = annotations[keys.container] || firstContainer(pod);
  const cp = containerProblem(pod, container, `annotation ${keys.container}`);
  if (cp) problems.push(cp);
  const onError = onErrorFromAnnotation(annotations, keys.onError, problems);
  const timeoutMs = hookDurationField(annotations[keys.timeout], `annotation ${keys.timeout}`, problems) || DEFAULT_HOOK_TIMEOUT_MS;
  return { ...annotationHookFields(commandText, container, onError), timeoutMs, ...problemField(problems) };
}

/** Whether a hook spec's resources include pods (Velero resolves the names; pods are all hooks apply to). */
function selectsPods(spec: BackupResourceHookSpec): boolean {
  const isPods = (r: string) => /^(pods?|po)(\.)?$/i.test(r) || r === '*';
  const inc = spec.includedResources ?? [];
  const exc = spec.excludedResources ?? [];
  if (exc.some((r) => isPods(r) && r !== '*')) return false;
  return inc.length === 0 || inc.some(isPods);
}

export function hookSpecApplies(spec: BackupResourceHookSpec, pod: HookPod): boolean {
  if (!new IncludesExcludes(spec.includedNamespaces, spec.excludedNamespaces).shouldInclude(pod.metadata.namespace ?? '')) return false;
  if (!selectsPods(spec)) return false;
  if (spec.labelSelector && !matchesLabelSelector(pod.metadata.labels, spec.labelSelector as LabelSelectorLike)) return false;
  return true;
}

/** The hooks to run in `pod` for `phase`, in order. */
export function backupHooksFor(pod: HookPod, phase: BackupHookPhase, spec: Pick<BackupSpec, 'hooks'>): ResolvedExecHook[] {
  const fromAnnotation = annotationHook(pod, phase);
  if (fromAnnotation) return [fromAnnotation];
  const out: ResolvedExecHook[] = [];
  for (const [i, hookSpec] of (spec.hooks?.resources ?? []).entries()) {
    if (!hookSpecApplies(hookSpec, pod)) continue;
    for (const [index, hook] of (hookSpec[phase] ?? []).entries()) {
      const exec = hook.exec;
      const container = exec.container || firstContainer(pod);
      const field = `spec.hooks.resources[${i}].${phase}[${index}].exec`;
      const problems: string[] = [];
      const cp = containerProblem(pod, container, `${field}.container`);
      if (cp) problems.push(cp);
      const timeoutMs = hookDurationField(exec.timeout, `${field}.timeout`, problems) || DEFAULT_HOOK_TIMEOUT_MS;
      out.push({
        name: hookSpec.name,
        source: 'spec',
        index,
        container,
        command: [...exec.command],
        onError: exec.onError ?? HookErrorMode.Fail,
        timeoutMs,
        ...problemField(problems),
      });
    }
  }
  return out;
}

/** Problems of `spec.hooks` found without a pod (backup validation): filters and selectors of each entry. */
export function backupHookSpecProblems(spec: Pick<BackupSpec, 'hooks'>): string[] {
  const problems: string[] = [];
  for (const [i, h] of (spec.hooks?.resources ?? []).entries()) {
    const at = `spec.hooks.resources[${i}] (${h.name})`;
    for (const p of includesExcludesProblems(h.includedNamespaces, h.excludedNamespaces)) problems.push(`${at}: invalid included/excluded namespace lists: ${p}`);
    for (const p of includesExcludesProblems(h.includedResources, h.excludedResources)) problems.push(`${at}: invalid included/excluded resource lists: ${p}`);
    if (h.labelSelector) for (const p of labelSelectorProblems(h.labelSelector)) problems.push(`${at}: invalid label selector: ${p}`);
  }
  return problems;
}
