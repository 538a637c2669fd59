/**
 * The tiny shell program that turns a host process into a "container": it runs inside a fresh mount namespace
 * (`unshare --mount --propagation slave`, so host mounts still reach it but its own never leak out), bind-mounts
 * each volume at its mountPath, enters workingDir, drops to runAsUser/runAsGroup and to the container's capabilities
 * (drop ALL plus what it adds) and no_new_privs with setpriv, runs the command
 * and records its exit status in a file, so a restarted kubelet can still learn how an adopted process ended.
 */
import { dirname } from 'node:path';

export interface ContainerMount {
  /** Path on the host (node root). */
  source: string;
  /** mountPath inside the container; created on the host when missing, as an empty file for file sources. */
  target: string;
  readOnly: boolean;
  sourceIsFile: boolean;
  /**
   * mountPropagation Bidirectional: mounts the container makes below it reach the host (a CSI node plugin's
   * publish mounts). The container then runs in a mount namespace that keeps the host's propagation
   * (`--propagation unchanged`) and its other mounts are made slaves.
   */
  bidirectional?: boolean | undefined;
}

/** The `unshare --propagation` mode a container's mount namespace is created with. */
export function namespacePropagation(mounts: readonly ContainerMount[]): 'slave' | 'unchanged' {
  return mounts.some((m) => m.bidirectional) ? 'unchanged' : 'slave';
}

export interface LaunchSpec {
  argv: readonly string[];
  mounts: readonly ContainerMount[];
  workingDir?: string | undefined;
  runAsUser?: number | undefined;
  runAsGroup?: number | undefined;
  supplementalGroups?: readonly number[] | undefined;
  /**
   * The capabilities the command may hold (securityContext.capabilities with drop ALL), lower-case names without
   * CAP_; undefined keeps the launch script's own. A root process's capabilities after exec are its bounding set.
   */
  capabilities?: readonly string[] | undefined;
  /** securityContext.allowPrivilegeEscalation false: the command runs with no_new_privs. */
  noNewPrivs?: boolean | undefined;
  /** A shared object to LD_PRELOAD into the command (not into the launch script itself). */
  preload?: string | undefined;
  /** Written with the command's exit status (128+signal when killed by a signal). */
  exitCodeFile: string;
  /** Created once the container is set up, just before the command runs (exec and hooks wait for it). */
  startedFile?: string | undefined;
}

/** Exit status of the wrapper when it could not set the container up (mounts, workingDir, user). */
export const SETUP_FAILED_EXIT = 128;

/** POSIX-shell single-quoting. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function buildLaunchScript(spec: LaunchSpec): string {
  const q = shellQuote;
  const lines: string[] = [
    'fail() { echo "cairn local kubelet: $1" >&2; exit ' + String(SETUP_FAILED_EXIT) + '; }',
  ];
  const shared = namespacePropagation(spec.mounts) === 'unchanged';
  for (const m of spec.mounts) {
    if (m.sourceIsFile) {
      lines.push(`mkdir -p ${q(dirname(m.target))} && { [ -e ${q(m.target)} ] || : > ${q(m.target)}; } || fail ${q(`cannot create mount point ${m.target}`)}`);
    } else {
      lines.push(`mkdir -p ${q(m.target)} || fail ${q(`cannot create mount point ${m.target}`)}`);
    }
    lines.push(`mount --rbind ${q(m.source)} ${q(m.target)} || fail ${q(`cannot mount ${m.target}`)}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${q(m.target)} || fail ${q(`cannot make ${m.target} read-only`)}`);
    // In a namespace that keeps the host's propagation only Bidirectional mounts may pass mounts back out.
    if (shared && !m.bidirectional) lines.push(`mount --make-rslave ${q(m.target)} || fail ${q(`cannot make ${m.target} a slave mount`)}`);
  }
  // Without workingDir a container starts in its image's WORKDIR, which for the mapped images is /.
  const workingDir = spec.workingDir || '/';
  lines.push(`mkdir -p ${q(workingDir)} && cd ${q(workingDir)} || fail ${q(`cannot enter workingDir ${workingDir}`)}`);
  const run: string[] = [];
  const changesUser = spec.runAsUser !== undefined || spec.runAsGroup !== undefined;
  if (changesUser || spec.capabilities !== undefined || spec.noNewPrivs) {
    run.push('setpriv');
    if (spec.runAsUser !== undefined) run.push(`--reuid=${spec.runAsUser}`);
    const gid = spec.runAsGroup ?? spec.runAsUser;
    if (gid !== undefined) run.push(`--regid=${gid}`);
    if (changesUser) {
      const groups = spec.supplementalGroups ?? [];
      run.push(groups.length > 0 ? `--groups=${groups.join(',')}` : '--clear-groups');
    }
    if (spec.capabilities !== undefined) {
      const keep = spec.capabilities.map((c) => `,+${c}`).join('');
      run.push(`--bounding-set=-all${keep}`, '--inh-caps=-all');
    }
    if (spec.noNewPrivs) run.push('--no-new-privs');
    run.push('--');
  }
  run.push(...spec.argv.map(q));
  if (spec.startedFile) lines.push(`: > ${q(spec.startedFile)}`);
  if (spec.preload) lines.push(`LD_PRELOAD=${q(spec.preload)}"\${LD_PRELOAD:+:$LD_PRELOAD}"; export LD_PRELOAD`);
  // A caught TERM is deferred until the foreground command ends, and caught (not ignored) dispositions
  // reset on exec, so the command still receives the process-group SIGTERM normally. A TERM that arrives
  // before the command starts is remembered, and the command is then not started at all.
  lines.push("stop=; trap 'stop=1' TERM INT");
  lines.push(`if [ -n "$stop" ]; then code=143; else ${run.join(' ')}; code=$?; fi`);
  lines.push(`echo "$code" > ${q(spec.exitCodeFile)}`);
  lines.push('exit "$code"');
  return lines.join('\n') + '\n';
}
