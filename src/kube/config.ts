/**
 * Where the cluster is. Order: --kubeconfig, $KUBECONFIG, ~/.kube/config, then in-cluster configuration when
 * running in a pod. Unlike client-node's loadFromDefault we never fall back to localhost:8080: a missing
 * configuration is an error that says what to do.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, delimiter } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterError, UsageError } from '../base/errors.js';
import { PooledKubeConfig } from './pooled-config.js';

export interface ClusterOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/** Environment as read at call time (never at import time), injectable for tests. */
export interface ConfigEnv {
  KUBECONFIG?: string | undefined;
  KUBERNETES_SERVICE_HOST?: string | undefined;
  KUBERNETES_SERVICE_PORT?: string | undefined;
  HOME?: string | undefined;
}

export function loadKubeConfig(opts: ClusterOptions, env: ConfigEnv = process.env): KubeConfig {
  // Requests share kept-alive connections (./pooled-config.ts).
  const kc = new PooledKubeConfig();
  const files = kubeconfigFiles(opts, env);
  if (files.length > 0) {
    try {
      // Several files in KUBECONFIG merge as kubectl does; the first one that defines a context wins.
      for (const f of files) {
        const one = new KubeConfig();
        one.loadFromFile(f);
        kc.mergeConfig(one, true);
        if (!kc.currentContext && one.currentContext) kc.setCurrentContext(one.currentContext);
      }
    } catch (err) {
      throw new ClusterError(`cannot read kubeconfig ${files.join(delimiter)}: ${(err as Error).message}`);
    }
  } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    kc.loadFromCluster();
  } else {
    throw new ClusterError(
      'no cluster configured: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config',
    );
  }
  if (opts.context) {
    if (!kc.getContextObject(opts.context)) {
      throw new UsageError('--context', `context "${opts.context}" not found in kubeconfig`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new ClusterError('kubeconfig has no current context with a cluster: pass --context or set current-context');
  }
  return kc;
}

function kubeconfigFiles(opts: ClusterOptions, env: ConfigEnv): string[] {
  if (opts.kubeconfig) {
    if (!existsSync(opts.kubeconfig)) throw new UsageError('--kubeconfig', `file not found: ${opts.kubeconfig}`);
    return [opts.kubeconfig];
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter((f) => f && existsSync(f));
    if (files.length === 0) throw new ClusterError(`KUBECONFIG names no existing file: ${env.KUBECONFIG}`);
    return files;
  }
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) ? [home] : [];
}
