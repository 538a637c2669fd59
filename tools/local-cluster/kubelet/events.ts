/**
 * Pod events as the kubelet writes them (source component "kubelet", host = node name, fieldPath naming the
 * container). Best effort: a failed event write is logged, never fatal.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { errorMessage } from './kube-api.js';

export type EventType = 'Normal' | 'Warning';

export interface PodEvent {
  pod: V1Pod;
  /** e.g. `spec.containers{app}` or `spec.initContainers{init}`. */
  fieldPath?: string | undefined;
  type: EventType;
  reason: string;
  message: string;
}

export class EventRecorder {
  private seq = 0;

  constructor(
    private readonly core: CoreV1Api,
    private readonly nodeName: string,
    private readonly log: Logger,
  ) {}

  record(e: PodEvent): void {
    void this.write(e).catch((err: unknown) => {
      const message = errorMessage(err);
      // Events for pods of a namespace being deleted are refused; that is expected, not worth a warning.
      const level = message.includes('is being terminated') ? 'debug' : 'warn';
      this.log[level]({ reason: e.reason, pod: e.pod.metadata?.name, err: message }, 'cannot write event');
    });
  }

  private async write(e: PodEvent): Promise<void> {
    const meta = e.pod.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const now = new Date();
    this.seq += 1;
    const suffix = (now.getTime() * 1000 + (this.seq % 1000)).toString(16);
    await this.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `${meta.name ?? 'pod'}.${suffix}`, namespace },
        involvedObject: {
          apiVersion: 'v1',
          kind: 'Pod',
          name: meta.name,
          namespace,
          uid: meta.uid,
          ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
          ...(e.fieldPath ? { fieldPath: e.fieldPath } : {}),
        },
        reason: e.reason,
        message: e.message,
        type: e.type,
        source: { component: 'kubelet', host: this.nodeName },
        reportingComponent: 'kubelet',
        reportingInstance: this.nodeName,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
