/**
 * The building blocks of `describe` output. Text is written as Velero's describer writes it (tab-terminated cells,
 * leading tabs for indentation) and aligned at the end by the Go tabwriter emulation, so columns line up exactly
 * as in Velero's output.
 */
import { tabwrite } from '../tabwriter.js';
import type { Result } from '../../api/results.js';
import { formatDurationNanos, parseDurationNanos, type BackupOperation, type ResourceIdentifier, type RestoreOperation } from '../../api/index.js';
import type { Results } from '../../api/results.js';
import { selectorText, type Fetched } from '../backups.js';
import type { Colours } from '../colour.js';

export const NONE = '<none>';

export class Describer {
  private text = '';
  /** Put before every line (Velero's Describer.Prefix): a schedule's backup template is the backup spec indented. */
  prefix = '';

  /** Appends raw text (may hold several lines and tabs). */
  print(text: string): void {
    this.text += text;
  }

  line(text = ''): void {
    this.text += this.prefix + text + '\n';
  }

  /** `Name:\tk=v` with further pairs on continuation lines, sorted by key; `<none>` when empty. */
  map(name: string, m: Readonly<Record<string, string>> | undefined | null): void {
    const keys = Object.keys(m ?? {}).sort();
    if (!keys.length) return this.line(`${name}:\t${NONE}`);
    keys.forEach((k, i) => this.line(`${i === 0 ? `${name}:\t` : '\t'}${k}=${(m ?? {})[k]}`));
  }

  /** A list under a heading indented by `indent` tabs; continuation lines line up with the first value. */
  slice(indent: number, name: string, items: readonly string[] | undefined): void {
    const pre = '\t'.repeat(indent);
    if (!items?.length) return this.line(`${pre}${name}:\t${pre}${NONE}`);
    items.forEach((x, i) => this.line(i === 0 ? `${pre}${name}:\t${x}` : `${pre}\t${x}`));
  }

  /** The Warnings/Errors block of a results file. */
  result(name: string, result: Result | undefined): void {
    this.line(`${name}:`);
    this.slice(1, 'Velero', result?.velero);
    this.slice(1, 'Cluster', result?.cluster);
    const namespaces = Object.keys(result?.namespaces ?? {}).sort();
    if (!namespaces.length) return this.line(`\tNamespaces: ${NONE}`);
    this.line('\tNamespaces:');
    for (const ns of namespaces) this.slice(2, ns, result?.namespaces?.[ns]);
  }

  toString(): string {
    return tabwrite(this.text);
  }
}

/** What backup and restore describe both take besides their object and its live volume objects. */
export interface DescribeFilesInput<VolumeInfo, Operation> {
  details: boolean;
  colours: Colours;
  /** The results file; read only when there are warnings or errors. */
  results?: Fetched<Results> | undefined;
  /** The volume info file. */
  volumeInfo?: Fetched<VolumeInfo[]> | undefined;
  /** The resource list file; with details only. */
  resourceList?: Fetched<Record<string, string[]>> | undefined;
  /** The item operations file; with details and item operations only. */
  itemOperations?: Fetched<Operation[]> | undefined;
  /** The command name used in hints ("cairn"). */
  cli?: string;
}

/** The head of every describe: the name in bold, the namespace, labels and annotations. */
export function describeMetadata(
  d: Describer,
  meta: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> },
  c: Colours,
): void {
  d.line(`Name:\t${c.bold(meta.name ?? '')}`);
  d.line(`Namespace:\t${meta.namespace ?? ''}`);
  d.map('Labels', meta.labels);
  d.map('Annotations', meta.annotations);
}

/** Validation errors after a blank line; Velero prints the first on the heading's line and aligns the rest under it. */
export function describeValidationErrors(d: Describer, errors: readonly string[] | null | undefined, c: Colours): void {
  if (!errors?.length) return;
  d.line();
  errors.forEach((e, i) => d.line(`${i === 0 ? 'Validation errors:' : ''}\t${c.red(e)}`));
}

/** The label selector and the OR-ed selectors, a blank line apart (backup spec and restore spec alike). */
export function describeLabelSelectors(d: Describer, spec: { labelSelector?: object | null; orLabelSelectors?: readonly object[] | null }): void {
  d.line(`Label selector:\t${selectorText(spec.labelSelector)}`);
  d.line();
  d.line(`Or label selector:\t${spec.orLabelSelectors?.length ? spec.orLabelSelectors.map((s) => selectorText(s)).join(' or ') : NONE}`);
}

/**
 * The Warnings/Errors blocks of a backup's or restore's results file; nothing when both counts are zero.
 * They part only where the file could not be read: backup describe then prints the counts from the status when the
 * file is missing (`countsWhenMissing`), restore describe reports it as an error whatever the reason.
 */
export function describeResults(
  d: Describer,
  counts: { warnings: number; errors: number },
  results: Fetched<Results> | undefined,
  countsWhenMissing: boolean,
): void {
  const { warnings, errors } = counts;
  if (warnings === 0 && errors === 0) return;
  if (countsWhenMissing && (!results || (!results.ok && results.notFound))) {
    d.line(`Errors:\t${errors}`);
    d.line(`Warnings:\t${warnings}`);
    return;
  }
  if (!results || !results.ok) {
    const why = results && !results.ok ? results.error : 'not found';
    d.line(`Warnings:\t<error getting warnings: ${why}>`);
    d.line();
    d.line(`Errors:\t<error getting errors: ${why}>`);
    return;
  }
  if (warnings > 0) {
    d.line();
    d.result('Warnings', results.value.warnings);
  }
  if (errors > 0) {
    d.line();
    d.result('Errors', results.value.errors);
  }
}

/** Velero's BoolPointerString. */
export function boolText(value: boolean | null | undefined, falseText: string, trueText: string, unsetText: string): string {
  if (value === undefined || value === null) return unsetText;
  return value ? trueText : falseText;
}

/** A Go duration as metav1.Duration prints it ("0s" when unset). */
export function durationText(value: string | undefined): string {
  if (!value) return '0s';
  const nanos = parseDurationNanos(value);
  return nanos === undefined ? value : formatDurationNanos(nanos);
}

export function listOr(items: readonly string[] | null | undefined, empty: string): string {
  return items?.length ? items.join(', ') : empty;
}

/** Resource List: `<apiVersion/Kind>:` then `- ns/name` lines, kinds sorted. */
export function describeResourceList(d: Describer, list: Readonly<Record<string, readonly string[]>>): void {
  d.line('Resource List:');
  for (const gvk of Object.keys(list).sort()) {
    d.line(`\t${gvk}:`);
    for (const item of list[gvk] ?? []) d.line(`\t\t- ${item}`);
  }
}

/** The resource list of a backup or restore (`what`), or why it could not be read. */
export function describeFetchedResourceList(d: Describer, what: 'backup' | 'restore', list: Fetched<Record<string, string[]>> | undefined): void {
  if (!list || (!list.ok && list.notFound)) d.line(`Resource List:\t<${what} resource list not found>`);
  else if (!list.ok) d.line(`Resource List:\t<error getting ${what} resource list: ${list.error}>`);
  else describeResourceList(d, list.value);
}

/** Velero's grouping of data-path phases for describe. */
export function phaseGroup(phase: string | undefined): string {
  if (!phase || phase === 'New') return 'New';
  if (phase === 'InProgress') return 'In Progress';
  return phase;
}

/** A resource identifier as Go prints its GroupResource: `resource.group` (`resource` for the core group). */
function groupResource(id: ResourceIdentifier): string {
  return id.Group ? `${id.Resource}.${id.Group}` : id.Resource;
}

/** One async item operation, as Velero's describe lists them with --details. */
export function describeOperation(d: Describer, op: BackupOperation | RestoreOperation, goTime: (t: string | undefined) => string | undefined): void {
  const id = op.spec.resourceIdentifier;
  d.line(`\tOperation for ${groupResource(id)} ${id.Namespace}/${id.Name}:`);
  if ('backupItemAction' in op.spec) d.line(`\t\tBackup Item Action Plugin:\t${op.spec.backupItemAction}`);
  else d.line(`\t\tRestore Item Action Plugin:\t${op.spec.restoreItemAction}`);
  d.line(`\t\tOperation ID:\t${op.spec.operationID}`);
  const items = 'postOperationItems' in op.spec ? (op.spec.postOperationItems ?? []) : [];
  if (items.length) d.line('\t\tItems to Update:');
  for (const it of items) d.line(`\t\t\t${groupResource(it)} ${it.Namespace}/${it.Name}`);
  const st = op.status;
  d.line(`\t\tPhase:\t${st.phase ?? ''}`);
  if (st.error) d.line(`\t\tOperation Error:\t${st.error}`);
  if ((st.nTotal ?? 0) > 0 || (st.nCompleted ?? 0) > 0) d.line(`\t\tProgress:\t${st.nCompleted ?? 0} of ${st.nTotal ?? 0} complete (${st.operationUnits ?? ''})`);
  if (st.description) d.line(`\t\tProgress description:\t${st.description}`);
  if (st.created) d.line(`\t\tCreated:\t${goTime(st.created) ?? st.created}`);
  if (st.started) d.line(`\t\tStarted:\t${goTime(st.started) ?? st.started}`);
  if (st.updated) d.line(`\t\tUpdated:\t${goTime(st.updated) ?? st.updated}`);
}

/** The item-operations line (or, with details, the list) of a backup or restore. */
export function describeOperations<T extends BackupOperation | RestoreOperation>(
  d: Describer,
  title: string,
  counts: { attempted: number; completed: number; failed: number },
  details: boolean,
  operations: { ok: true; value: T[] } | { ok: false; notFound: boolean; error: string } | undefined,
  goTime: (t: string | undefined) => string | undefined,
): void {
  if (counts.attempted <= 0) return;
  if (!details) {
    d.line(`${title}:\t${counts.completed} of ${counts.attempted} completed successfully, ${counts.failed} failed (specify --details for more information)`);
    return;
  }
  if (!operations || !operations.ok) {
    d.line(`${title}:\t<error getting operation info: ${operations && !operations.ok ? operations.error : 'not found'}>`);
    return;
  }
  d.line(`${title}:`);
  for (const op of operations.value) describeOperation(d, op, goTime);
}
