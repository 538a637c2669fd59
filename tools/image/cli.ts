/**
 * `npm run image`: builds cairn's image from the Containerfile with buildah (no daemon), tags it `cairn:<version>`
 * and `cairn:dev`, prints its size, and optionally writes an OCI archive and pushes it to a registry.
 *
 *   npm run image [-- --base IMAGE --build-base IMAGE] [--oci-archive FILE] [--push REGISTRY/REPO[:TAG]]
 *                 [--tls-verify=false]
 *
 * Without --base the runtime and build bases are made here from Debian packages and the project's Node.js
 * (tools/image/node-base.ts); with --base/--build-base any Node.js 24 images (e.g. the public node:24 ones).
 */
import { parseArgs } from 'node:util';
import { BuilderMissingError, openBuildah } from './buildah.js';
import { buildImage } from './build.js';

const log = (line: string) => process.stderr.write(`[image] ${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      base: { type: 'string' },
      'build-base': { type: 'string' },
      'oci-archive': { type: 'string' },
      push: { type: 'string', multiple: true },
      'tls-verify': { type: 'string', default: 'true' },
    },
    strict: true,
  });
  if ((values.base === undefined) !== (values['build-base'] === undefined)) {
    log('--base and --build-base go together: the runtime base and the build base (one with npm)');
    return 2;
  }
  const buildah = await openBuildah(log);
  const result = await buildImage(buildah, {
    log,
    bases: values.base && values['build-base'] ? { base: values.base, buildBase: values['build-base'] } : undefined,
    ociArchive: values['oci-archive'],
    push: values.push ?? [],
    tlsVerify: values['tls-verify'] !== 'false',
  });
  process.stdout.write([
    `image:       ${result.tags.join(' ')}`,
    `id:          ${result.id}`,
    `size:        ${mb(result.compressedBytes)} compressed (${result.layers} layers), ${result.unpacked} unpacked`,
    `built in:    ${result.seconds.toFixed(0)} s`,
    ...(values['oci-archive'] ? [`oci archive: ${values['oci-archive']}`] : []),
    ...result.pushed.map((p) => `pushed:      ${p}`),
    '',
  ].join('\n'));
  return 0;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof BuilderMissingError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`image build failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
