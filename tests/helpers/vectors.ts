// Reads the conformance vectors of firmware-protocol/vectors (the format is in make_vectors.py).
import { readFileSync } from 'node:fs';

export interface Vector {
  verdict: 'accept' | 'reject';
  line: string;
  /** accept: canonical meaning; reject: error code */
  what: string;
  /** the file line, for messages */
  lineNo: number;
}

/** Undoes the C escapes of a vector line (\r \t \\ \xHH). */
export function unescape(s: string): string {
  return s.replace(/\\(x[0-9A-Fa-f]{2}|r|t|\\)/g, (_m, e: string) =>
    e === 'r' ? '\r' : e === 't' ? '\t' : e === '\\' ? '\\' : String.fromCharCode(parseInt(e.slice(1), 16)),
  );
}

export function readVectors(file: string): Vector[] {
  const out: Vector[] = [];
  readFileSync(new URL(`../../firmware-protocol/vectors/${file}`, import.meta.url), 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      if (raw === '' || raw.startsWith('#')) return;
      const [verdict, line, what] = raw.split('\t');
      if ((verdict !== 'accept' && verdict !== 'reject') || line === undefined || what === undefined)
        throw new Error(`${file}:${i + 1}: bad vector`);
      out.push({ verdict, line: unescape(line), what: verdict === 'reject' ? what.split(' ')[0]! : what, lineNo: i + 1 });
    });
  return out;
}
