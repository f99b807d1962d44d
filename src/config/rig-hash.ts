/**
 * A rig's content hash: what says that two rig files describe the same arm. SHA-256 of the file's
 * JSON with its keys sorted and its `name` and `description` left out, so that formatting, key order and
 * the words for people do not count, and every number (lengths, masses, limits, encoder zeros, wiring)
 * does. `twolink teach` writes it into the taught file; `replay` compares it (issue 35: a file taught on
 * one rig replayed on four others without a word).
 */
import { createHash } from 'node:crypto';
import { parseJsonText, readConfigText } from './load.js';

/** `value` as JSON with every object's keys sorted (a canonical text to hash). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The content hash of a parsed rig file (hex SHA-256); `name` and `description` do not count. */
export function rigContentSha256(parsed: unknown): string {
  const body =
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? Object.fromEntries(Object.entries(parsed).filter(([k]) => k !== 'name' && k !== 'description'))
      : parsed;
  return createHash('sha256').update(canonical(body)).digest('hex');
}

/** The content hash of the rig file at `file` (read and parsed again; errors name the file). */
export function rigFileSha256(file: string): string {
  return rigContentSha256(parseJsonText(readConfigText(file, 'rig file'), file));
}
