/**
 * Include/exclude entries of Velero's specs are globs, matched as gobwas/glob matches them without separators:
 * backup filters (namespaces and resources, and the hooks that share them), restore namespace filters and resource
 * modifiers' namespaces match with this one. Restore resource filters match resource names their own way
 * (resourceEntryMatches).
 */

/**
 * A glob as Velero matches include/exclude entries (gobwas/glob without separators): `*` any run of characters,
 * `?` one character, `[abc]`/`[a-z]`/`[!abc]` one of a set. Plain names match themselves only.
 */
export function globPattern(pattern: string): RegExp | undefined {
  if (!/[*?[]/.test(pattern)) return undefined;
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
