/** Printing benchmark sections as aligned tables, and collecting their figures as JSON. */
import { loadavg } from 'node:os';

export interface BenchResult {
  title: string;
  rows: [string, string, string][];
  figures: Record<string, number | string | number[]>;
}

export function section(title: string, rows: [string, string, string][], figures: BenchResult['figures']): BenchResult {
  return { title, rows, figures };
}

export function printSection(r: BenchResult): void {
  const w0 = Math.max(...r.rows.map((x) => x[0].length));
  const w1 = Math.max(...r.rows.map((x) => x[1].length));
  process.stdout.write(`\n## ${r.title}\n`);
  for (const [a, b, c] of r.rows) process.stdout.write(`  ${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}\n`);
}

/** The machine's one-minute load average, for the rows that say under what load a figure was measured. */
export function load1(): number {
  // os.loadavg() is documented as [1, 5, 15 min] (zeros on Windows): a missing first entry is Node's bug, said here.
  const [oneMinute] = loadavg();
  if (oneMinute === undefined) throw new Error('os.loadavg() gave no one-minute load average');
  return oneMinute;
}
