/**
 * Progress for long waits. On a TTY: a cli-progress bar on stderr. Otherwise (CI logs, pipes): one plain line each
 * time the state text changes, never a flood of carriage returns.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(value: number, total: number, text: string): void;
  stop(finalText?: string): void;
}

export interface ProgressOptions {
  label: string;
  /** Defaults to whether stderr is a terminal. */
  tty?: boolean;
  stream?: NodeJS.WriteStream;
}

export function createProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = opts.tty ?? Boolean(stream.isTTY);
  if (!tty) {
    let last = '';
    return {
      update(_value, _total, text) {
        const line = `${opts.label}: ${text}`;
        if (line !== last) stream.write(line + '\n');
        last = line;
      },
      stop(finalText) {
        if (finalText) stream.write(`${opts.label}: ${finalText}\n`);
      },
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: `${opts.label} [{bar}] {value}/{total} {text}`, stream, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(value, total, text) {
      if (!started) {
        bar.start(Math.max(total, 1), value, { text });
        started = true;
      }
      bar.setTotal(Math.max(total, 1));
      bar.update(value, { text });
    },
    stop(finalText) {
      if (started) {
        if (finalText) bar.update({ text: finalText });
        bar.stop();
      } else if (finalText) {
        stream.write(`${opts.label}: ${finalText}\n`);
      }
    },
  };
}

/** Whether prompts may be shown: only with a terminal on both ends. */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI;
}
