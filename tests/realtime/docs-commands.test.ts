// Every command of the docs runs (issues 35 and 36): the ```sh blocks of README.md and docs/**/*.md,
// page by page, in order, as a reader runs them (tests/helpers/doc-commands.ts: the convention). Each
// page runs in a folder of its own outside the repo, with a copy of rigs/ and examples/ and an empty
// runs/, so nothing lands in the repo (git status is the same after); each command must end with the
// exit code the page says (0 unless `# exit N`), every file it reads must be in the repo or written by
// a command before it on the page, and every file it says it writes (--out, --record, --plot, --junit)
// must be there after it. Real time: the runs are the mock rig's in real time, as the reader's are.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, twolink, whyExit } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { filesOf, pageCommands } from '../helpers/doc-commands.js';

/** The pages: the README and every page under docs/. */
function pages(): string[] {
  const out = ['README.md'];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.md')) out.push(join(dir, e.name));
    }
  };
  walk('docs');
  return out;
}

const gitStatus = (): string => execFileSync('git', ['-C', ROOT, 'status', '--porcelain'], { encoding: 'utf8' });

/** A folder for one page's commands: copies of what they read from the repo, an empty runs/. */
function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-docs-'));
  for (const d of ['rigs', 'examples']) cpSync(join(ROOT, d), join(dir, d), { recursive: true });
  mkdirSync(join(dir, 'runs'));
  return dir;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the commands of the docs', () => {
  it('finds commands to run, in the README and in docs/', () => {
    const counts = pages().map((p) => pageCommands(readFileSync(join(ROOT, p), 'utf8')).commands.length);
    expect(counts[0], 'README.md').toBeGreaterThan(0);
    expect(
      counts.slice(1).reduce((a, b) => a + b, 0),
      'docs/',
    ).toBeGreaterThan(0);
  });

  for (const page of pages()) {
    const { commands, problems } = pageCommands(readFileSync(join(ROOT, page), 'utf8'));
    if (commands.length === 0 && problems.length === 0) continue;
    it(
      `${page}: every command runs, in order`,
      async () => {
        expect(problems, `${page}: lines of sh blocks that cannot run as written`).toEqual([]);
        const before = gitStatus();
        const dir = workdir();
        dirs.push(dir);
        const written = new Set<string>();
        for (const c of commands) {
          const where = `${page}:${c.line}: npx twolink ${c.args.join(' ')}`;
          const { writes, reads } = filesOf(c.args);
          for (const f of reads) {
            const ok = written.has(f) || (!f.startsWith('runs/') && existsSync(join(dir, f)));
            expect(ok, `${where}: reads ${f}, which is not in the repo and no command before it on the page writes`).toBe(true);
          }
          const r = await twolink(c.args, { cwd: dir, timeoutMs: 120_000 });
          expect(r.code, `${where}: exit code\n${whyExit(r)}`).toBe(c.exit);
          if (c.exit !== 0) continue;
          for (const f of writes) {
            expect(existsSync(join(dir, f)), `${where}: says it writes ${f}, which is not there after it`).toBe(true);
            written.add(f);
          }
        }
        expect(gitStatus(), `${page}: the commands changed the repo (${relative(ROOT, dir)})`).toBe(before);
        // A hang guard: a page's commands take up to ~30 s each on a quiet machine (a real-time run, a plot).
      },
      hangGuardMs(30_000 * commands.length + 30_000),
    );
  }
});
