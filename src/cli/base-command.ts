/**
 * The base of every cairn command: the shared flags, the logger, and one catch() that turns any error into
 * one clear line on stderr and a documented exit code (src/base/errors.ts). No stack traces for users;
 * `--log-level debug` adds the stack to the log.
 */
import { statSync } from 'node:fs';
import { Command, Flags, Errors, type Interfaces } from '@oclif/core';
import { LOG_FORMATS, LOG_LEVELS, createLogger, type Logger, type LogFormat, type LogLevel } from '../base/logger.js';
import { ExitCode, exitCodeFor, oneLine, CairnError, UsageError } from '../base/errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from './output.js';
import { clientConfigPath, configColorized, configNamespace, loadClientConfig, unusedKeys, type ClientConfig } from './client-config.js';
import { colourEnabled } from './colour.js';

export const DEFAULT_NAMESPACE = 'velero';

/**
 * The client config file, read once while it is unchanged (every command reads it for its namespace default and
 * colour). A file that cannot be parsed fails the command with exit 2 and names the file.
 */
let clientConfigCache: { key: string; config: ClientConfig } | undefined;
export function currentClientConfig(): ClientConfig {
  const path = clientConfigPath();
  let key = `${path}@none`;
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st) key = `${path}@${st.mtimeMs}:${st.size}`;
  } catch {
    // Not statable (a parent is not a directory, no permission): loadClientConfig says what is wrong.
    key = `${path}@unreadable`;
  }
  if (clientConfigCache?.key !== key) {
    const config = loadClientConfig(path);
    const unused = unusedKeys(config);
    if (unused.length) process.stderr.write(`warning: client config ${path}: cairn does not use ${unused.map((k) => `"${k}"`).join(', ')}\n`);
    clientConfigCache = { key, config };
  }
  return clientConfigCache.config;
}

/** Order: -n/--namespace, $CAIRN_NAMESPACE (oclif reads both before this), the client config, `velero`. */
async function namespaceDefault(): Promise<string> {
  return configNamespace(currentClientConfig()) ?? DEFAULT_NAMESPACE;
}

/** Flags every command has. */
export const clusterFlags = {
  kubeconfig: Flags.string({ description: 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).', helpGroup: 'GLOBAL' }),
  // --kubecontext is Velero's spelling of the same flag.
  context: Flags.string({ description: 'The kubeconfig context to use (also: --kubecontext).', aliases: ['kubecontext'], helpGroup: 'GLOBAL' }),
  namespace: Flags.string({
    char: 'n',
    description: 'The namespace cairn is installed in (default: the client config\'s namespace, else velero).',
    default: namespaceDefault,
    // Read at run time from the user's file: never baked into oclif.manifest.json.
    noCacheDefault: true,
    env: 'CAIRN_NAMESPACE',
    helpGroup: 'GLOBAL',
  }),
  // No default here: the CLI logs at warn, the long-running roles at info (roleLogLevel), and an explicit
  // `--log-level warn` must stay warn for them too.
  'log-level': Flags.option({
    options: LOG_LEVELS,
    description: 'Log level (logs go to stderr). Default: warn; info for the server, the node agent and the data movers.',
    helpGroup: 'GLOBAL',
  })(),
  'log-format': Flags.option({ options: LOG_FORMATS, default: 'text' as LogFormat, description: 'Log format.', helpGroup: 'GLOBAL' })(),
};

/** Added by read commands. */
export const outputFlag = {
  output: Flags.option({ char: 'o', options: OUTPUT_FORMATS, default: 'table' as OutputFormat, description: 'Output format.' })(),
};

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/**
 * Velero's tri-state flags accept `--flag`, `--flag=true` and `--flag=false`; oclif booleans accept `--flag` and
 * `--no-flag`. Rewrites the `=true|false` forms so both spellings work.
 */
export function normaliseTriStateArgv(argv: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    if (arg === '--') {
      out.push(...argv.slice(argv.indexOf(arg)));
      break;
    }
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(arg);
    if (m && names.includes(m[1] as string)) {
      const value = (m[2] as string).toLowerCase();
      if (value === 'true') out.push(`--${m[1]}`);
      else if (value === 'false') out.push(`--no-${m[1]}`);
      else throw new UsageError(`--${m[1]}`, `"${m[2]}" is not true or false`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = clusterFlags;

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;
  /** Positional arguments (for commands with `strict = false` that take several names). */
  protected positional: string[] = [];
  /** Boolean flags that also take Velero's `--flag=true|false` spelling (see normaliseTriStateArgv). */
  protected readonly triStateFlags: readonly string[] = [];
  private logger?: Logger;

  protected get log_(): Logger {
    this.logger ??= createLogger({ level: this.flags?.['log-level'] ?? 'warn', format: this.flags?.['log-format'] ?? 'text' });
    return this.logger;
  }

  public override async init(): Promise<void> {
    if (this.triStateFlags.length) this.argv = normaliseTriStateArgv(this.argv, this.triStateFlags);
    await super.init();
    const { args, flags, argv } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as BaseFlags<T>;
    this.args = args as BaseArgs<T>;
    this.positional = argv.map(String);
  }

  /** Whether human output may be coloured: a terminal, no NO_COLOR, no `--no-color`, and not `colorized=false` in the client config. */
  protected colourEnabled(noColor: boolean | undefined): boolean {
    return colourEnabled({ noColor: Boolean(noColor), colorized: configColorized(currentClientConfig()) });
  }

  /** Writes command output (never logs) to stdout. */
  protected out(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  protected override async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<void> {
    // oclif's own exits (help, --version, this.exit()) pass through unchanged.
    if (err instanceof Errors.ExitError) throw err;
    let code: number;
    let message: string;
    if (err instanceof CairnError) {
      code = exitCodeFor(err);
      message = oneLine(err);
    } else if (err instanceof Errors.CLIError) {
      // Flag and argument parse errors from oclif: bad input.
      code = err.oclif?.exit === 0 ? 0 : ExitCode.Usage;
      message = oneLine(err);
    } else {
      code = ExitCode.Failed;
      message = oneLine(err);
    }
    if (this.logger || this.flags) this.log_.debug({ stack: err.stack }, 'error details');
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = code;
    this.exit(code);
  }
}

/**
 * The log level of a long-running role (server, node agent, data mover): `info` unless `--log-level` says otherwise,
 * as Velero's server and node agent log (the CLI's default is `warn`). The server passes the same level to its
 * plugins.
 */
export function roleLogLevel(flag: LogLevel | undefined): LogLevel {
  return flag ?? 'info';
}
