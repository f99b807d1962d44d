// The README's tour and the guide's commands (docs/), read as a newcomer runs them, top to bottom: in each
// page, every recording a command reads was written by a command before it on that page or by the README's
// tour (which a newcomer runs first), and everything
// they write goes to runs/, which git ignores (so following the docs leaves nothing in the repo root).
// The commands a newcomer can run as they are sit in ```sh blocks, one per line, starting with
// `npx twolink ` (docs/index.md); this test reads them, the docs test runs them.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

/** The README, then every page of docs/ (not its generated reference/), by path from the repo root. */
const PAGES = [
  'README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (page: string): string => readFileSync(`${ROOT}${page}`, 'utf8');

/** The `npx twolink ...` lines of a page's sh blocks, in order, split into words (comments cut). */
function commands(page: string): string[][] {
  const out: string[][] = [];
  for (const block of text(page).matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      const cmd = line.replace(/\s+#.*$/, '').trim();
      if (cmd.startsWith('npx twolink ')) out.push(cmd.split(/\s+/).slice(2));
    }
  }
  return out;
}

/** The files a command writes: after --record, --out, --plot and --junit. */
function writes(args: string[]): string[] {
  return args.flatMap((a, i) => (['--record', '--out', '--plot', '--junit'].includes(a) && args[i + 1] ? [args[i + 1]!] : []));
}

/** The recordings a compare or plot command reads (its .ndjson and .mcap arguments that are not outputs). */
function reads(args: string[]): string[] {
  if (args[0] !== 'compare' && !(args[0] === 'plot' && args[1] !== 'traj')) return [];
  return args.slice(1).filter((a, i, all) => /\.(ndjson|mcap)$/.test(a) && !['--record', '--out', '--plot'].includes(all[i - 1] ?? ''));
}

describe("the README's tour and the guide's commands", () => {
  it('the README keeps the start short: at most 200 lines, the two commands, a tour, the install section for macOS and Windows', () => {
    const readme = text('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(201);
    expect(readme).toContain('npm install && npm start    # installs, builds, and runs the demo on the built-in simulated rig');
    expect(readme).toContain('npm test ');
    expect(readme).toContain('## A tour');
    expect(readme).toContain('## Install on macOS and Windows');
    expect(commands('README.md').length).toBeGreaterThanOrEqual(10);
  });

  it("in each page, compare and plot read only recordings that an earlier command on the page, or the README's tour, wrote", () => {
    const tour = commands('README.md').flatMap(writes);
    let readers = 0;
    for (const page of PAGES) {
      const written = new Set<string>(page === 'README.md' ? [] : tour);
      for (const c of commands(page)) {
        for (const f of reads(c)) {
          readers++;
          expect(
            written.has(f),
            `${page}: twolink ${c.join(' ')}: ${f} is not written by any command before it on this page or in the README's tour`,
          ).toBe(true);
        }
        for (const f of writes(c)) written.add(f);
      }
    }
    expect(readers).toBeGreaterThanOrEqual(6);
  });

  it('the tour and the guide write only into runs/, and no two commands write the same file', () => {
    const seen = new Map<string, string>();
    let lines = 0;
    for (const page of PAGES) {
      for (const c of commands(page)) {
        lines++;
        for (const f of writes(c)) {
          expect(f, `${page}: twolink ${c.join(' ')}`).toMatch(/^runs\//);
          // Run one after another in one checkout, a second write of the same file would be refused ("exists").
          expect(seen.get(f), `${page}: twolink ${c.join(' ')} writes ${f}, which ${seen.get(f)} writes too`).toBeUndefined();
          seen.set(f, `${page}: twolink ${c.join(' ')}`);
        }
      }
    }
    expect(lines).toBeGreaterThanOrEqual(30);
  });

  it('every page the README and the docs link to exists', () => {
    for (const page of PAGES) {
      const dir = page.startsWith('docs/') ? `${ROOT}docs/` : ROOT;
      for (const m of text(page).matchAll(/\]\(([^)#]+\.md)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^https?:/.test(target) || target === '../CHANGELOG.md' || target === 'CHANGELOG.md') continue; // CHANGELOG.md comes with the API entry (another branch)
        expect(existsSync(`${dir}${target}`), `${page} links to ${target}`).toBe(true);
      }
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
