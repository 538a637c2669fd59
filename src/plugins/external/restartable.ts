/**
 * A plugin binary kept running for whoever needs its plugins: started on first use, started again when it has
 * exited (a crash, a kill), with every plugin that had been initialised (an object store's Init config) set up
 * again on the new process before anyone uses it. One per binary and session, as Velero keeps one per command.
 */
import { PluginProcess, type PluginProcessOptions } from './process.js';

export type Reinitializer = (proc: PluginProcess) => Promise<void>;

export interface RestartableProcessOptions extends PluginProcessOptions {
  /** Told each time a process that had exited is replaced. */
  onRestart?: (info: { command: string; restarts: number }) => void;
}

export class RestartableProcess {
  private current: PluginProcess | undefined;
  private starting: Promise<PluginProcess> | undefined;
  private readonly reinitializers = new Map<string, Reinitializer>();
  private stopped = false;
  private restartCount = 0;

  constructor(private readonly opts: RestartableProcessOptions) {}

  get command(): string {
    return this.opts.command;
  }

  get restarts(): number {
    return this.restartCount;
  }

  /** Runs on every later process, under `key` (one per plugin: a second registration replaces the first). */
  addReinitializer(key: string, fn: Reinitializer): void {
    this.reinitializers.set(key, fn);
  }

  /** The live process: the running one, or a new one if it has exited (reinitialised before it is handed out). */
  async get(): Promise<PluginProcess> {
    if (this.stopped) throw new Error(`plugin ${this.opts.command} was stopped`);
    if (this.current && !this.current.hasExited) return this.current;
    this.starting ??= this.startNext().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async startNext(): Promise<PluginProcess> {
    const replacing = this.current !== undefined;
    if (this.current) await this.current.stop();
    this.current = undefined;
    const proc = await PluginProcess.start(this.opts);
    if (replacing) {
      this.restartCount++;
      this.opts.onRestart?.({ command: this.opts.command, restarts: this.restartCount });
      try {
        for (const reinit of this.reinitializers.values()) await reinit(proc);
      } catch (err) {
        await proc.stop();
        throw err;
      }
    }
    this.current = proc;
    return proc;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const starting = this.starting;
    if (starting) await starting.catch(() => undefined);
    await this.current?.stop();
    this.current = undefined;
  }
}
