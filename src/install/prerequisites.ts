/**
 * What an install option needs the cluster to have before anything is applied, checked up front so a missing piece
 * fails the install at once with the flag's name instead of half-way through.
 */
import { UsageError } from '../base/errors.js';
import type { Kube } from '../kube/client.js';
import { missingResources } from '../kube/crd-presence.js';

/** ServiceMonitor is the Prometheus operator's kind: `--metrics-service-monitor` needs its CRD. */
export async function requireServiceMonitorCrd(kube: Kube): Promise<void> {
  const missing = await missingResources(kube, [{ group: 'monitoring.coreos.com', version: 'v1', plural: 'servicemonitors' }]);
  if (missing.length > 0) {
    throw new UsageError(
      '--metrics-service-monitor',
      `the cluster does not serve ${missing.join(', ')}: install the Prometheus operator (its CRDs) first, or leave the flag out (the pods carry prometheus.io/scrape annotations)`,
    );
  }
}
