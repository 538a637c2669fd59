/**
 * Colour for human output. On only when the output is a terminal, NO_COLOR is unset, `--no-color` was not given and
 * the client config does not say `colorized=false`, so pipes, files and CI logs never carry escape codes.
 */
import { Chalk, type ChalkInstance } from 'chalk';

export interface ColourOptions {
  /** `--no-color` was given. */
  noColor?: boolean;
  /** The client config's `colorized` (default true); false turns colour off everywhere. */
  colorized?: boolean;
  /** Defaults to whether stdout is a terminal. */
  tty?: boolean;
  env?: NodeJS.ProcessEnv;
}

export function colourEnabled(opts: ColourOptions = {}): boolean {
  const env = opts.env ?? process.env;
  if (opts.noColor || opts.colorized === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return opts.tty ?? Boolean(process.stdout.isTTY);
}

export interface Colours {
  enabled: boolean;
  /** Green for Completed, red for Failed/PartiallyFailed/FailedValidation, as Velero does; others unchanged. */
  phase(phase: string, text?: string): string;
  red(text: string): string;
  green(text: string): string;
  bold(text: string): string;
}

const GREEN = new Set(['Completed']);
const RED = new Set(['Failed', 'PartiallyFailed', 'FailedValidation']);

export function colours(enabled: boolean): Colours {
  const chalk: ChalkInstance = new Chalk({ level: enabled ? 1 : 0 });
  return {
    enabled,
    phase(phase, text = phase) {
      if (GREEN.has(phase)) return chalk.green(text);
      if (RED.has(phase)) return chalk.red(text);
      return text;
    },
    red: (t) => chalk.red(t),
    green: (t) => chalk.green(t),
    bold: (t) => chalk.bold(t),
  };
}
