/** Writes the termination message the node-agent's watcher reads from the finished pod's container status. */
import { writeFileSync } from 'node:fs';

export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** Kubernetes keeps at most 4096 bytes of a termination message. */
const MAX_TERMINATION_MESSAGE = 4096;

export function writeTerminationMessage(path: string, message: string): void {
  writeFileSync(path, Buffer.from(message, 'utf8').subarray(0, MAX_TERMINATION_MESSAGE));
}
