import { up } from './cluster.js';
import { pushOciArchive } from './registry-push.js';
const log = (l: string) => console.error(l);
const r = await up({ runDir: '/root/.cache/cairn/run/nodes-dev', name: 'nodes-dev', nodes: 2, runtime: 'containerd', log });
console.error(`up in ${r.seconds.toFixed(1)}s`);
for (const repository of ['cairn-backup/cairn', 'cairn/cairn']) {
  console.error(await pushOciArchive('/tmp/nodes-cairn-dev.tar', { registryUrl: r.state.registry.url, repository, tag: 'dev' }));
}
console.log(JSON.stringify(r.state.s3));
