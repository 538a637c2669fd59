/**
 * AWS shared-credentials files (the `cloud` key of the cloud-credentials Secret, as Velero uses them):
 * `[profile]` sections of `key = value` lines. Values are returned to callers but never put into messages.
 */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export class CredentialsFormatError extends Error {}

export function parseAwsCredentialsFile(content: string | Buffer, profile = 'default'): AwsCredentials {
  const text = typeof content === 'string' ? content : content.toString('utf8');
  let section: string | undefined;
  const sections = new Map<string, Map<string, string>>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*(?:profile\s+)?([^\]]+?)\s*\]$/.exec(line);
    if (header) {
      section = header[1] as string;
      if (!sections.has(section)) sections.set(section, new Map());
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0 || section === undefined) {
      throw new CredentialsFormatError('not an AWS credentials file: expected "[profile]" sections with key = value lines');
    }
    sections.get(section)?.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  const found = sections.get(profile);
  if (!found) throw new CredentialsFormatError(`no [${profile}] profile in the credentials file`);
  const accessKeyId = found.get('aws_access_key_id');
  const secretAccessKey = found.get('aws_secret_access_key');
  if (!accessKeyId) throw new CredentialsFormatError(`profile [${profile}] has no aws_access_key_id`);
  if (!secretAccessKey) throw new CredentialsFormatError(`profile [${profile}] has no aws_secret_access_key`);
  const token = found.get('aws_session_token');
  return { accessKeyId, secretAccessKey, ...(token ? { sessionToken: token } : {}) };
}
