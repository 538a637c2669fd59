import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeForOutcome, follow, outcomeMessages, progressText, waitAndReport, type FollowState } from '../../../src/cli/wait.js';
import { volumeBytes } from '../../../src/cli/backups.js';
import { createProgress, type Progress } from '../../../src/cli/progress.js';
import { isBackupDone } from '../../../src/api/index.js';

/** A status source that returns the given states one per read, then repeats the last. */
function source(states: (FollowState | undefined)[]): () => Promise<FollowState | undefined> {
  let i = 0;
  return async () => states[Math.min(i++, states.length - 1)];
}

function recordingProgress(): Progress & { updates: string[]; stopped: number } {
  const p = {
    updates: [] as string[],
    stopped: 0,
    update(value: number, total: number, text: string) {
      p.updates.push(`${value}/${total} ${text}`);
    },
    stop() {
      p.stopped++;
    },
  };
  return p;
}

const noSleep = async () => {};

function plainStream(): { stream: NodeJS.WriteStream; text: () => string } {
  const pt = new PassThrough();
  const chunks: Buffer[] = [];
  pt.on('data', (c: Buffer) => chunks.push(c));
  return { stream: pt as unknown as NodeJS.WriteStream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('--wait', () => {
  it('follows the phases to Completed and exits 0', async () => {
    const progress = recordingProgress();
    const outcome = await follow({
      read: source([{ phase: 'New', done: 0, total: 0 }, { phase: 'InProgress', done: 3, total: 10 }, { phase: 'Completed', done: 10, total: 10 }]),
      isDone: isBackupDone,
      progress,
      sleep: noSleep,
    });
    expect(outcome).toEqual({ kind: 'finished', state: { phase: 'Completed', done: 10, total: 10 } });
    expect(progress.updates).toEqual(['0/0 New', '3/10 InProgress, 3/10 items', '10/10 Completed, 10/10 items']);
    expect(progress.stopped).toBe(1);
    expect(exitCodeForOutcome(outcome)).toBe(0);
  });

  it.each(['Failed', 'PartiallyFailed', 'FailedValidation'])('exits 1 for %s', async (phase) => {
    const outcome = await follow({ read: source([{ phase, done: 0, total: 0 }]), isDone: isBackupDone, progress: recordingProgress(), sleep: noSleep });
    expect(exitCodeForOutcome(outcome)).toBe(1);
  });

  it('prints Velero-style messages and the validation errors on FailedValidation', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await waitAndReport({
      kind: 'backup',
      name: 'b1',
      read: source([{ phase: 'FailedValidation', done: 0, total: 0, validationErrors: ['backup storage location "nope" not found'] }]),
      isDone: isBackupDone,
      progress: recordingProgress(),
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      sleep: noSleep,
    });
    expect(code).toBe(1);
    expect(out).toEqual([
      'Waiting for backup to complete. You may safely press ctrl-c to stop waiting - your backup will continue in the background.',
      'Backup completed with status: FailedValidation. You may check for more information using the commands `cairn backup describe b1` and `cairn backup logs b1`.',
    ]);
    expect(err).toEqual(['Backup "b1" failed validation:', '  backup storage location "nope" not found']);
  });

  it('Ctrl-C stops waiting (not the backup), says so and exits 130', async () => {
    const controller = new AbortController();
    let reads = 0;
    const err: string[] = [];
    const code = await waitAndReport({
      kind: 'restore',
      name: 'r1',
      read: async () => {
        // Ctrl-C arrives while the command sleeps between two reads.
        if (++reads === 1) setTimeout(() => controller.abort(), 20);
        return { phase: 'InProgress', done: reads, total: 5 };
      },
      isDone: isBackupDone,
      progress: recordingProgress(),
      signal: controller.signal,
      out: () => {},
      err: (l) => err.push(l),
      intervalMs: 60_000,
    });
    expect(code).toBe(130);
    expect(reads).toBe(1);
    expect(err).toEqual(['Stopped waiting; the restore continues in the background; see `cairn restore describe r1`.']);
  });

  it('adds volume bytes once pod volume backups report them', () => {
    expect(progressText({ phase: 'InProgress', done: 5, total: 9, bytesDone: 1536, totalBytes: 20 * 1024 * 1024 })).toBe('InProgress, 5/9 items, 1.5 KiB/20.0 MiB volume data');
    expect(progressText({ phase: 'InProgress', done: 5, total: 9, bytesDone: 0, totalBytes: 0 })).toBe('InProgress, 5/9 items');
    expect(volumeBytes([{ status: { progress: { bytesDone: 10, totalBytes: 100 } } }, { status: {} }, { status: { progress: { bytesDone: 5, totalBytes: 5 } } }])).toEqual({ bytesDone: 15, totalBytes: 105 });
  });

  it('rides over a few failed reads but reports a persistent failure', async () => {
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls <= 2) throw new Error('503 storage is (re)initializing');
      return { phase: 'Completed', done: 1, total: 1 };
    };
    const outcome = await follow({ read: flaky, isDone: isBackupDone, progress: recordingProgress(), sleep: noSleep });
    expect(outcome.kind).toBe('finished');
    const broken = async (): Promise<FollowState> => {
      throw new Error('forbidden');
    };
    await expect(follow({ read: broken, isDone: isBackupDone, progress: recordingProgress(), sleep: noSleep, maxReadFailures: 3 })).rejects.toThrow('forbidden');
  });

  it('reports a backup deleted while waiting', async () => {
    const outcome = await follow({ read: source([{ phase: 'InProgress', done: 0, total: 1 }, undefined]), isDone: isBackupDone, progress: recordingProgress(), sleep: noSleep });
    expect(outcome.kind).toBe('gone');
    expect(exitCodeForOutcome(outcome)).toBe(1);
    expect(outcomeMessages('backup', 'b', outcome).stderr).toEqual(['Backup "b" was deleted while waiting for it.']);
  });

  it('without a TTY prints one plain line per change, not one per poll', async () => {
    const { stream, text } = plainStream();
    const progress = createProgress({ label: 'Backup b1', tty: false, stream });
    await follow({
      read: source([
        { phase: 'New', done: 0, total: 0 },
        { phase: 'New', done: 0, total: 0 },
        { phase: 'InProgress', done: 2, total: 4 },
        { phase: 'InProgress', done: 2, total: 4 },
        { phase: 'InProgress', done: 4, total: 4 },
        { phase: 'Completed', done: 4, total: 4 },
      ]),
      isDone: isBackupDone,
      progress,
      sleep: noSleep,
    });
    expect(text()).toBe('Backup b1: New\nBackup b1: InProgress, 2/4 items\nBackup b1: InProgress, 4/4 items\nBackup b1: Completed, 4/4 items\n');
    expect(text()).not.toContain('\r');
  });

  it('on a TTY drives a progress bar with items done and total', async () => {
    const { stream, text } = plainStream();
    Object.assign(stream, { isTTY: true, columns: 120, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
    const progress = createProgress({ label: 'Backup b1', tty: true, stream });
    await follow({
      read: source([{ phase: 'InProgress', done: 1, total: 4 }, { phase: 'Completed', done: 4, total: 4 }]),
      isDone: isBackupDone,
      progress,
      sleep: noSleep,
    });
    expect(text()).toContain('Backup b1 [');
    expect(text()).toContain('4/4 Completed, 4/4 items');
  });
});
