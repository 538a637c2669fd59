/**
 * The local cluster's certificates and keys, made with the openssl CLI (node:crypto cannot issue X.509
 * certificates). One CA signs everything: the API server's serving certificate, the admin client certificate,
 * the kubelet stand-ins' serving certificate (one for all nodes, valid for the cluster's node subnet .1 to .20) and the API
 * server's client certificate towards the kubelets. EC P-256 keys keep generation fast.
 * Files already present are kept, so a kept run directory restarts with the same identities.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  adminCert: string;
  adminKey: string;
  kubeletCert: string;
  kubeletKey: string;
  kubeletClientCert: string;
  kubeletClientKey: string;
}

export interface PkiOptions {
  dir: string;
  /** First address of the service CIDR: the `kubernetes` Service's cluster IP, a SAN of the API server. */
  kubernetesServiceIp: string;
  /** The nodes' loopback /24 (`127.a.b`, see nodeSubnet in nodes.ts). */
  nodeSubnet: string;
  /** Highest last octet of `<nodeSubnet>.x` the kubelet certificate covers. */
  maxNodeOctet: number;
  /** Node names the kubelet certificate also covers as DNS names. */
  nodeNames: string[];
  /** Further addresses the API server listens on (the host's address on the real nodes' bridge). */
  apiServerIps?: string[];
}

export function ensurePki(opts: PkiOptions): Pki {
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (name: string) => join(dir, name);
  const pki: Pki = {
    dir,
    caCert: f('ca.crt'),
    caKey: f('ca.key'),
    apiserverCert: f('apiserver.crt'),
    apiserverKey: f('apiserver.key'),
    serviceAccountKey: f('sa.key'),
    serviceAccountPub: f('sa.pub'),
    adminCert: f('admin.crt'),
    adminKey: f('admin.key'),
    kubeletCert: f('kubelet.crt'),
    kubeletKey: f('kubelet.key'),
    kubeletClientCert: f('apiserver-kubelet-client.crt'),
    kubeletClientKey: f('apiserver-kubelet-client.key'),
  };

  if (!existsSync(pki.caCert)) {
    issue({ dir, cert: pki.caCert, key: pki.caKey, subject: { CN: 'cairn-local-ca' }, extensions: CA_EXTENSIONS });
  }
  const leaf = (cert: string, key: string, subject: Subject, extensions: string[]) => {
    if (!existsSync(cert)) issue({ dir, cert, key, subject, extensions, ca: pki });
  };
  leaf(pki.apiserverCert, pki.apiserverKey, { CN: 'kube-apiserver' }, serverExtensions([
    'IP:127.0.0.1', `IP:${opts.kubernetesServiceIp}`, ...(opts.apiServerIps ?? []).map((ip) => `IP:${ip}`), 'DNS:localhost', 'DNS:kubernetes', 'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local',
  ]));
  leaf(pki.adminCert, pki.adminKey, { CN: 'cairn-admin', O: 'system:masters' }, CLIENT_EXTENSIONS);
  const nodeIps = Array.from({ length: opts.maxNodeOctet }, (_, i) => `IP:${opts.nodeSubnet}.${i + 1}`);
  leaf(pki.kubeletCert, pki.kubeletKey, { CN: 'cairn-local-kubelet' },
    serverExtensions([...nodeIps, 'DNS:localhost', ...opts.nodeNames.map((n) => `DNS:${n}`)]));
  leaf(pki.kubeletClientCert, pki.kubeletClientKey, { CN: 'kube-apiserver-kubelet-client', O: 'system:masters' }, CLIENT_EXTENSIONS);

  if (!existsSync(pki.serviceAccountKey)) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(pki.serviceAccountKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(pki.serviceAccountPub, publicKey.export({ type: 'spki', format: 'pem' }));
  }
  return pki;
}

interface Subject {
  CN: string;
  O?: string;
}

const CA_EXTENSIONS = [
  'basicConstraints = critical, CA:TRUE',
  'keyUsage = critical, keyCertSign, cRLSign, digitalSignature',
  'subjectKeyIdentifier = hash',
];

const CLIENT_EXTENSIONS = [
  'basicConstraints = critical, CA:FALSE',
  'keyUsage = critical, digitalSignature, keyEncipherment',
  'extendedKeyUsage = clientAuth',
  'authorityKeyIdentifier = keyid',
];

function serverExtensions(sans: string[]): string[] {
  return [
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature, keyEncipherment',
    'extendedKeyUsage = serverAuth, clientAuth',
    'authorityKeyIdentifier = keyid',
    `subjectAltName = ${sans.join(', ')}`,
  ];
}

interface IssueOptions {
  dir: string;
  cert: string;
  key: string;
  subject: Subject;
  extensions: string[];
  /** Signing CA; self-signed when absent. */
  ca?: Pick<Pki, 'caCert' | 'caKey'>;
}

function issue(opts: IssueOptions): void {
  // A private config file: the system openssl.cnf would add CA extensions to every `req -x509` certificate.
  const config = join(opts.dir, `.${Date.now()}-${process.pid}.cnf`);
  const dn = Object.entries(opts.subject).map(([k, v]) => `${k} = ${v}`);
  writeFileSync(config, ['[req]', 'prompt = no', 'distinguished_name = dn', 'x509_extensions = ext',
    '[dn]', ...dn, '[ext]', ...opts.extensions, ''].join('\n'));
  try {
    const args = ['req', '-x509', '-new', '-config', config, '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
      '-nodes', '-keyout', opts.key, '-out', opts.cert, '-days', '3650'];
    if (opts.ca) args.push('-CA', opts.ca.caCert, '-CAkey', opts.ca.caKey);
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    chmodSync(opts.key, 0o600);
  } finally {
    rmSync(config, { force: true });
  }
}
