/**
 * The local kubelet runs pods as a kubelet would: init containers in order, restart policies, termination
 * messages, env/args/volumes, logs through the API, unknown images.
 */
import { describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import {
  containerStatus,
  core,
  createPod,
  fileNamespace,
  getPod,
  nodes,
  podLogs,
  waitForEvent,
  waitForPhase,
  waitForPod,
} from './helpers.js';

const ns = fileNamespace('lk-containers');

// The stand-in's containers share the host's root, so a volume mounted over a directory that holds the node's run
// directory would hide it from the container (a cache under /work, say, on a machine whose HOME lies there): the
// stand-in refuses such a mount (tested below), and the shared volume goes where no run directory is.
const shell = (name: string, script: string, extra: object = {}) => ({ name, image: 'busybox:1.36', command: ['sh', '-c', script], ...extra });

describe('local kubelet: containers', () => {
  it('runs init containers in order before the containers', async () => {
    await createPod(ns, {
      metadata: { name: 'init-order' },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'work', emptyDir: {} }],
        initContainers: [
          shell('first', 'echo first >> /pod-work/order', { volumeMounts: [{ name: 'work', mountPath: '/pod-work' }] }),
          shell('second', 'test -s /pod-work/order && echo second >> /pod-work/order', { volumeMounts: [{ name: 'work', mountPath: '/pod-work' }] }),
        ],
        containers: [shell('main', 'echo main >> /pod-work/order; cat /pod-work/order', { volumeMounts: [{ name: 'work', mountPath: '/pod-work' }] })],
      },
    });
    const pod = await waitForPhase(ns, 'init-order', 'Succeeded');
    expect(await podLogs(ns, 'init-order')).toBe('first\nsecond\nmain\n');
    expect(containerStatus(pod, 'first')?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(containerStatus(pod, 'second')?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
  });

  it('a failing init container fails a restartPolicy Never pod and the containers never start', async () => {
    await createPod(ns, {
      metadata: { name: 'init-fails' },
      spec: { restartPolicy: 'Never', initContainers: [shell('init', 'exit 4')], containers: [shell('main', 'echo never')] },
    });
    const pod = await waitForPhase(ns, 'init-fails', 'Failed');
    expect(containerStatus(pod, 'init')?.state?.terminated?.exitCode).toBe(4);
    expect(containerStatus(pod, 'main')?.state?.waiting?.reason).toBe('PodInitializing');
  });

  it('starts sidecars (restartPolicy Always init containers) before the containers and stops them when the pod is done', async () => {
    await createPod(ns, {
      metadata: { name: 'with-sidecar' },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'work', emptyDir: {} }],
        initContainers: [shell('sidecar', 'echo up > /pod-work/sidecar; sleep 3600', { restartPolicy: 'Always', volumeMounts: [{ name: 'work', mountPath: '/pod-work' }] })],
        containers: [shell('main', 'while [ ! -e /pod-work/sidecar ]; do sleep 0.1; done; echo main saw sidecar', { volumeMounts: [{ name: 'work', mountPath: '/pod-work' }] })],
      },
    });
    const pod = await waitForPod(ns, 'with-sidecar', 'Succeeded with its sidecar stopped', (p) =>
      p.status?.phase === 'Succeeded' && containerStatus(p, 'sidecar')?.state?.terminated !== undefined);
    expect(await podLogs(ns, 'with-sidecar', { container: 'main' })).toBe('main saw sidecar\n');
    expect(containerStatus(pod, 'sidecar')?.restartCount).toBe(0);
  });

  it('reports the termination message from terminationMessagePath, or from the logs on error', async () => {
    await createPod(ns, {
      metadata: { name: 'term-msg' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          shell('file', 'echo -n "disk full" > /dev/termination-log; exit 3'),
          shell('custom-path', 'echo -n done > /tmp/cairn-msg/result', {
            terminationMessagePath: '/tmp/cairn-msg/result',
          }),
          shell('logs', 'echo line1; echo "last words"; exit 2', { terminationMessagePolicy: 'FallbackToLogsOnError' }),
        ],
      },
    });
    const pod = await waitForPhase(ns, 'term-msg', 'Failed');
    expect(containerStatus(pod, 'file')?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: 'disk full' });
    expect(containerStatus(pod, 'custom-path')?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed', message: 'done' });
    expect(containerStatus(pod, 'logs')?.state?.terminated).toMatchObject({ exitCode: 2, message: 'line1\nlast words\n' });
  });

  it('follows restart policies Never, OnFailure and Always', async () => {
    const marker = { volumes: [{ name: 'state', emptyDir: {} }] };
    const mount = { volumeMounts: [{ name: 'state', mountPath: '/state' }] };
    await createPod(ns, { metadata: { name: 'never' }, spec: { restartPolicy: 'Never', containers: [shell('c', 'exit 1')] } });
    await createPod(ns, {
      metadata: { name: 'on-failure' },
      spec: { restartPolicy: 'OnFailure', ...marker, containers: [shell('c', 'if [ -e /state/ran ]; then echo second; exit 0; fi; touch /state/ran; echo first; exit 1', mount)] },
    });
    await createPod(ns, { metadata: { name: 'always' }, spec: { restartPolicy: 'Always', containers: [shell('c', 'echo run; exit 0')] } });

    const never = await waitForPhase(ns, 'never', 'Failed');
    expect(containerStatus(never, 'c')).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 1 } } });

    const onFailure = await waitForPhase(ns, 'on-failure', 'Succeeded');
    expect(containerStatus(onFailure, 'c')).toMatchObject({ restartCount: 1, lastState: { terminated: { exitCode: 1 } } });
    expect(await podLogs(ns, 'on-failure', { container: 'c' })).toBe('second\n');
    expect(await podLogs(ns, 'on-failure', { container: 'c', previous: true })).toBe('first\n');

    const always = await waitForPod(ns, 'always', 'restarted twice', (p) => (containerStatus(p, 'c')?.restartCount ?? 0) >= 2);
    expect(always.status?.phase).toBe('Running');
    expect(containerStatus(always, 'c')?.lastState?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    await waitForEvent(ns, 'always', 'BackOff');
  });

  it('serves logs through the API (pods/log, tailLines, kubectl logs)', async () => {
    await createPod(ns, {
      metadata: { name: 'logger' },
      spec: { restartPolicy: 'Never', containers: [shell('c', 'for i in 1 2 3 4 5; do echo line$i; done; echo err >&2; sleep 3600')] },
    });
    await waitFor(async () => (await podLogs(ns, 'logger')).includes('err'), { timeoutMs: 60_000, description: 'logs of logger' });
    expect(await podLogs(ns, 'logger')).toBe('line1\nline2\nline3\nline4\nline5\nerr\n');
    expect(await podLogs(ns, 'logger', { tailLines: 2 })).toBe('line5\nerr\n');
    const { stdout } = await kubectl(['logs', '-n', ns, 'logger', '--tail=1']);
    expect(stdout).toBe('err\n');
    await core().deleteNamespacedPod({ namespace: ns, name: 'logger', gracePeriodSeconds: 1 });
  });

  it('builds env, args, downward API, configMap and secret volumes, and runs as the given user', async () => {
    await core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cfg' }, data: { 'app.conf': 'mode=fast', LEVEL: '3' } } });
    await core().createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'creds' }, stringData: { password: 's3cr3t' } } });
    await createPod(ns, {
      metadata: { name: 'env', labels: { app: 'demo' } },
      spec: {
        restartPolicy: 'Never',
        securityContext: { runAsUser: 1000, runAsGroup: 3000 },
        volumes: [
          { name: 'cfg', configMap: { name: 'cfg' } },
          { name: 'creds', secret: { secretName: 'creds' } },
          { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        ],
        containers: [
          {
            name: 'c',
            image: 'alpine:3.20',
            command: ['sh', '-c'],
            args: ['echo "$(GREETING) $POD_NAME $LEVEL"; id -u; id -g; pwd; cat /etc/cfg/app.conf; echo; cat /etc/creds/password; echo; cat /etc/info/labels; echo'],
            workingDir: '/tmp/cairn-wd',
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'GREETING', value: 'hello from $(POD_NAME)' },
            ],
            envFrom: [{ configMapRef: { name: 'cfg' } }],
            volumeMounts: [
              { name: 'cfg', mountPath: '/etc/cfg' },
              { name: 'creds', mountPath: '/etc/creds' },
              { name: 'info', mountPath: '/etc/info' },
            ],
          },
        ],
      },
    });
    await waitForPhase(ns, 'env', 'Succeeded');
    expect((await podLogs(ns, 'env')).split('\n')).toEqual([
      'hello from env env 3',
      '1000',
      '3000',
      '/tmp/cairn-wd',
      'mode=fast',
      's3cr3t',
      'app="demo"',
      '',
    ]);
  });

  it('waits for a missing secret volume (FailedMount) and starts once the secret exists', async () => {
    await createPod(ns, {
      metadata: { name: 'needs-secret' },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 's', secret: { secretName: 'later' } }],
        containers: [shell('c', 'cat /s/key', { volumeMounts: [{ name: 's', mountPath: '/s' }] })],
      },
    });
    const ev = await waitForEvent(ns, 'needs-secret', 'FailedMount');
    expect(ev.message).toContain('secret "later" not found');
    expect((await getPod(ns, 'needs-secret')).status?.phase).toBe('Pending');
    await core().createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'later' }, stringData: { key: 'arrived' } } });
    await waitForPhase(ns, 'needs-secret', 'Succeeded');
    expect(await podLogs(ns, 'needs-secret')).toBe('arrived');
  });

  it('runs cairn itself from the working tree for the cairn image', async () => {
    await createPod(ns, {
      metadata: { name: 'cairn' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'cairn', image: 'ghcr.io/example/cairn:dev', args: ['version', '-o', 'json'] }] },
    });
    // cairn runs from dist/: `npm test` builds first; run `npm run build` before running this file alone.
    const done = await waitForPod(ns, 'cairn', 'finished', (p) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''), 120_000);
    const logs = await podLogs(ns, 'cairn');
    expect(done.status?.phase, logs).toBe('Succeeded');
    const out = JSON.parse(logs) as { client: { nodeVersion: string } };
    expect(out.client.nodeVersion).toMatch(/^24\./);
  });

  it('gives pods in-cluster configuration: service env, token and CA that the API server accepts', async () => {
    // Plain Node.js in cairn's image: read the mounted service-account files and ask the API server who we are.
    const script = `
      const fs = require('node:fs'); const https = require('node:https');
      const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
      const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      const req = https.request({
        host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', ca: fs.readFileSync(dir + '/ca.crt'),
        headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'content-type': 'application/json' },
      }, (res) => { let out = ''; res.on('data', (c) => (out += c)); res.on('end', () => {
        console.log(fs.readFileSync(dir + '/namespace', 'utf8'));
        console.log(JSON.parse(out).status.userInfo.username);
        process.exit(res.statusCode === 201 ? 0 : 1);
      }); });
      req.end(body);`;
    await createPod(ns, {
      metadata: { name: 'in-cluster' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'cairn/cairn:dev', command: ['node', '-e', script] }] },
    });
    const done = await waitForPod(ns, 'in-cluster', 'finished', (p) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));
    const logs = await podLogs(ns, 'in-cluster');
    expect(done.status?.phase, logs).toBe('Succeeded');
    expect(logs).toBe(`${ns}\nsystem:serviceaccount:${ns}:default\n`);
  });

  it('leaves a pod with an unknown image Waiting in ErrImagePull, then ImagePullBackOff, with a Failed event', async () => {
    await createPod(ns, { metadata: { name: 'no-image' }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } });
    const pod = await waitForPod(ns, 'no-image', 'waiting in ImagePullBackOff', (p) => containerStatus(p, 'c')?.state?.waiting?.reason === 'ImagePullBackOff');
    expect(containerStatus(pod, 'c')?.state?.waiting?.message).toContain('Back-off pulling image "nginx:1.27"');
    expect(pod.status?.phase).toBe('Pending');
    const ev = await waitForEvent(ns, 'no-image', 'Failed');
    expect(ev.type).toBe('Warning');
    expect(ev.source).toMatchObject({ component: 'kubelet', host: pod.spec?.nodeName });
    expect(ev.message).toContain('nginx:1.27');
  });

  it('refuses a volume mounted over a parent of the node\'s directory (CreateContainerConfigError), not a pod that never starts', async () => {
    const parent = nodes()[0]!.rootDir.split('/').slice(0, 2).join('/');
    await createPod(ns, {
      metadata: { name: 'hides-node' },
      spec: { volumes: [{ name: 'v', emptyDir: {} }], containers: [shell('c', 'true', { volumeMounts: [{ name: 'v', mountPath: parent }] })] },
    });
    const pod = await waitForPod(ns, 'hides-node', 'refused its mount', (p) => containerStatus(p, 'c')?.state?.waiting?.reason === 'CreateContainerConfigError');
    expect(containerStatus(pod, 'c')?.state?.waiting?.message).toContain(`mountPath "${parent}" would hide`);
    const ev = await waitForEvent(ns, 'hides-node', 'Failed');
    expect(ev.message).toContain('would hide');
  });
});

describe('local kubelet: probes', () => {
  it('readiness (exec inside the container, httpGet on the pod IP) gates Ready; a failing liveness probe restarts', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    await createPod(ns, {
      metadata: { name: 'probed' },
      spec: {
        volumes: [{ name: 'flags', emptyDir: {} }],
        containers: [
          shell('exec-ready', 'sleep 2; touch /flags/ready; sleep 3600', {
            volumeMounts: [{ name: 'flags', mountPath: '/flags' }],
            readinessProbe: { exec: { command: ['test', '-e', '/flags/ready'] }, periodSeconds: 1 },
          }),
          {
            name: 'http-ready',
            image: 'cairn/cairn:dev',
            command: ['node', '-e', `setTimeout(() => require('node:http').createServer((q, r) => r.end('ok')).listen(${port}, process.env.POD_IP), 1000)`],
            env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
            ports: [{ name: 'web', containerPort: port }],
            readinessProbe: { httpGet: { path: '/', port: 'web' }, periodSeconds: 1 },
          },
        ],
      },
    });
    const notYet = await waitForPhase(ns, 'probed', 'Running');
    expect(notYet.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    const ready = await waitForPod(ns, 'probed', 'Ready', (p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    expect(ready.status?.containerStatuses?.every((c) => c.ready)).toBe(true);
    await core().deleteNamespacedPod({ namespace: ns, name: 'probed', gracePeriodSeconds: 1 });

    await createPod(ns, {
      metadata: { name: 'not-alive' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [shell('c', 'sleep 3600', { livenessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 2 } })],
      },
    });
    await waitForPod(ns, 'not-alive', 'restarted by its liveness probe', (p) => (containerStatus(p, 'c')?.restartCount ?? 0) >= 1);
    const ev = await waitForEvent(ns, 'not-alive', 'Unhealthy');
    expect(ev.message).toContain('Liveness probe failed');
  });
});

describe('local kubelet: exec', () => {
  it('runs commands in a container through the API (kubectl exec): output, stdin, exit code, mounts, workingDir', async () => {
    await createPod(ns, {
      metadata: { name: 'exec-me' },
      spec: {
        volumes: [{ name: 'data', emptyDir: {} }],
        containers: [shell('c', 'echo inside > /data/f; sleep 3600', { workingDir: '/data', volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
      },
    });
    await waitForPhase(ns, 'exec-me', 'Running');
    await waitFor(async () => (await kubectl(['exec', '-n', ns, 'exec-me', '--', 'cat', '/data/f'], { allowFailure: true })).stdout === 'inside\n', {
      timeoutMs: 30_000,
      description: 'exec sees the container volume',
    });
    const run = await kubectl(['exec', '-n', ns, 'exec-me', '--', 'sh', '-c', 'pwd; echo oops >&2; exit 3'], { allowFailure: true });
    expect(run).toMatchObject({ stdout: '/data\n', exitCode: 3 });
    expect(run.stderr).toContain('oops');
    const piped = await kubectl(['exec', '-i', '-n', ns, 'exec-me', '--', 'sh', '-c', 'cat > /data/g; wc -c < /data/g'], { input: 'from stdin' });
    expect(piped.stdout.trim()).toBe('10');
    await core().deleteNamespacedPod({ namespace: ns, name: 'exec-me', gracePeriodSeconds: 1 });
  });
});

describe('local kubelet: startup probe', () => {
  it('holds started and ready back until the startup probe passes', async () => {
    await createPod(ns, {
      metadata: { name: 'slow-start' },
      spec: {
        volumes: [{ name: 'flags', emptyDir: {} }],
        containers: [
          shell('c', 'echo booting; sleep 2; touch /flags/started; sleep 3600', {
            volumeMounts: [{ name: 'flags', mountPath: '/flags' }],
            startupProbe: { exec: { command: ['test', '-e', '/flags/started'] }, periodSeconds: 1, failureThreshold: 30 },
          }),
        ],
      },
    });
    await waitFor(async () => (await podLogs(ns, 'slow-start')).includes('booting'), { timeoutMs: 30_000, description: 'slow-start running' });
    const booting = await getPod(ns, 'slow-start');
    expect(containerStatus(booting, 'c')).toMatchObject({ started: false, ready: false, state: { running: {} } });
    const started = await waitForPod(ns, 'slow-start', 'started', (p) => containerStatus(p, 'c')?.started === true);
    expect(containerStatus(started, 'c')?.ready).toBe(true);
    await core().deleteNamespacedPod({ namespace: ns, name: 'slow-start', gracePeriodSeconds: 1 });
  });
});

describe('local kubelet: network', () => {
  it('servers on every node can listen on the same port on the wildcard address (each gets its pod IP)', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const server = `require('node:http').createServer((q, r) => r.end(process.env.NODE_NAME)).listen(${port})`;
    for (const node of nodes()) {
      await createPod(ns, {
        metadata: { name: `listen-${node.name}` },
        spec: {
          nodeName: node.name,
          containers: [{
            name: 'c',
            image: 'cairn/cairn:dev',
            command: ['node', '-e', server],
            env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
            ports: [{ name: 'http', containerPort: port }],
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
          }],
        },
      });
    }
    for (const node of nodes()) {
      const pod = await waitForPod(ns, `listen-${node.name}`, 'Ready', (p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
      expect(pod.status?.podIP).toBe(node.ip);
      const res = await fetch(`http://${node.ip}:${port}/`);
      expect(await res.text()).toBe(node.name);
    }
  });
});
