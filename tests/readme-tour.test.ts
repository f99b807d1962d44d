// The README's commands, read as a newcomer runs them, top to bottom: every recording a command reads
// was written by a command before it, and everything the tour and the compare section write goes to
// runs/, which git ignores (so the tour leaves nothing in the repo root).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

const readme = readFileSync(`${ROOT}README.md`, 'utf8');

/** The `npx twolink ...` lines of the README's sh blocks, in order, split into words (comments cut). */
function commands(): string[][] {
  const out: string[][] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      const cmd = line.replace(/\s+#.*$/, '').trim();
      if (cmd.startsWith('npx twolink ')) out.push(cmd.split(/\s+/).slice(2));
    }
  }
  return out;
}

/** The files a command writes: after --record, --out and --plot. */
function writes(args: string[]): string[] {
  return args.flatMap((a, i) => (['--record', '--out', '--plot'].includes(a) && args[i + 1] ? [args[i + 1]!] : []));
}

describe("the README's tour and compare section", () => {
  const cmds = commands();
  const section = (from: string, to: string): string => readme.slice(readme.indexOf(from), readme.indexOf(to));

  it('compare and plot read only recordings that an earlier command wrote', () => {
    const written = new Set<string>();
    const readers = cmds.filter((c) => c[0] === 'compare' || (c[0] === 'plot' && c[1] !== 'traj'));
    expect(readers.length).toBeGreaterThanOrEqual(6);
    for (const c of cmds) {
      if (c[0] === 'compare' || c[0] === 'plot') {
        const inputs = c.slice(1).filter((a, i, all) => a.endsWith('.ndjson') && !['--record', '--out', '--plot'].includes(all[i - 1] ?? ''));
        for (const f of inputs) expect(written.has(f), `twolink ${c.join(' ')}: ${f} is not written by any command before it`).toBe(true);
      }
      for (const f of writes(c)) written.add(f);
    }
  });

  it('the tour and the compare section write only into runs/', () => {
    const tour = section('## A tour', '## The dashboard');
    const compare = section('## Comparing runs, plots, exports', '## Identifying the arm');
    const lines = [...tour.split('\n'), ...compare.split('\n')].filter((l) => l.startsWith('npx twolink '));
    expect(lines.length).toBeGreaterThanOrEqual(15);
    for (const l of lines) {
      for (const f of writes(l.replace(/\s+#.*$/, '').split(/\s+/))) expect(f, l).toMatch(/^runs\//);
    }
  });

  it('runs/ is in the repo and git ignores what goes into it', () => {
    expect(existsSync(`${ROOT}runs/README.md`)).toBe(true);
    const ignored = (p: string): boolean => {
      try {
        execFileSync('git', ['-C', ROOT, 'check-ignore', '-q', p]);
        return true;
      } catch {
        return false;
      }
    };
    for (const f of ['runs/reach.ndjson', 'runs/circle.svg', 'runs/reach.mcap', 'runs/identified.json']) expect(ignored(f), f).toBe(true);
    expect(ignored('runs/README.md')).toBe(false);
  });
});
