/** Flags the long-running roles (the server and the node agent) share: where their health and metrics endpoints listen. */
import { Flags } from '@oclif/core';

/**
 * `--health-address`, `--health-port` (default `healthPort`) and `--metrics-address`; `healthPortNote` is said of
 * the health port where an empty metrics address falls back to it.
 */
export function roleEndpointFlags(healthPort: number, healthPortNote = '') {
  return {
    'health-address': Flags.string({ description: 'Address the health endpoint binds to (default: $POD_IP, else all).', env: 'POD_IP', default: '0.0.0.0' }),
    'health-port': Flags.integer({ description: 'Port of /healthz and /readyz (and of /metrics, unless --metrics-address names another).', default: healthPort }),
    'metrics-address': Flags.string({
      description: `Address of the Prometheus /metrics endpoint, as Velero's (e.g. ":8085"); empty: the health port (${healthPort}${healthPortNote}).`,
      default: '',
    }),
  };
}
