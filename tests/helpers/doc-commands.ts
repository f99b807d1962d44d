// The commands of the docs (README.md, docs/**/*.md), as tests/realtime/docs-commands.test.ts runs
// them. The convention: a runnable command is a line of a ```sh block that starts with `npx twolink `,
// one per line, a trailing `# comment` allowed and `# exit N` when it is meant to end with code N; a
// command that needs hardware or a person (a port, a board, a long time) goes in a ```console block,
// or in a ```sh block right after the line `<!-- docs-test: skip (the reason) -->`. A line of a ```sh
// block that is anything else is a problem the test names, so that every page keeps to it.

/** One runnable command of a page. */
export interface DocCommand {
  /** 1-based line of the page. */
  line: number;
  /** The line as written, without its comment. */
  text: string;
  /** The arguments after `npx twolink`. */
  args: string[];
  /** The exit code the page says it ends with (`# exit N`), 0 by default. */
  exit: number;
}

export interface PageCommands {
  commands: DocCommand[];
  /** Lines of ```sh blocks that are not runnable commands, with why. */
  problems: string[];
}

export const SKIP_MARK = /^<!--\s*docs-test:\s*skip\b.*-->$/;

/** Splits a command line into words, with '...' and "..." quoting. */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

/** A word that stands for something the reader fills in: `[--force fx,fy]`, `/dev/pts/N`, `...`. */
const PLACEHOLDER = /^\[|\]$|\/N$|\.\.\.|^<.*>$/;

/** A serial port of a real board (a pty of `twolink rig --pty` is a placeholder: its number is known only when it runs). */
const BOARD_PORT = /^\/dev\/(tty(ACM|USB|S)|cu\.)|^COM\d+$/;

/** The runnable commands of a page's text, in order, and the lines that break the convention. */
export function pageCommands(text: string): PageCommands {
  const lines = text.split('\n');
  const commands: DocCommand[] = [];
  const problems: string[] = [];
  let fence: { lang: string; skip: boolean } | undefined;
  let previous = '';
  lines.forEach((raw, i) => {
    const line = raw.trim();
    const open = /^```(\S*)/.exec(line);
    if (open) {
      fence = fence ? undefined : { lang: open[1]!, skip: SKIP_MARK.test(previous) };
      previous = line;
      return;
    }
    if (line !== '') previous = line;
    if (!fence || fence.lang !== 'sh' || fence.skip || line === '' || line.startsWith('#')) return;
    const hash = line.search(/\s#/);
    const cmd = (hash >= 0 ? line.slice(0, hash) : line).trim();
    const comment = hash >= 0 ? line.slice(hash).trim() : '';
    const where = `line ${i + 1}: ${cmd}`;
    if (!cmd.startsWith('npx twolink ')) {
      problems.push(
        `${where}: a line of a sh block that is not an \`npx twolink\` command (put it in a console block, or mark the block <!-- docs-test: skip (why) -->)`,
      );
      return;
    }
    const args = words(cmd).slice(2);
    if (args[0] === 'rig' && args.includes('--pty')) {
      problems.push(`${where}: twolink rig --pty serves until it is stopped: a console block (the docs test cannot stop it)`);
      return;
    }
    const board = args.find((a) => BOARD_PORT.test(a));
    if (board) {
      problems.push(`${where}: ${board} needs a board: a console block, or a block marked <!-- docs-test: skip (needs a board) -->`);
      return;
    }
    const held = args.filter((a) => PLACEHOLDER.test(a));
    if (held.length) {
      problems.push(
        `${where}: ${held.join(' ')} is a placeholder: a sh block holds commands that run as written (a console block for a template)`,
      );
      return;
    }
    const exit = /^#\s*exit\s+(\d+)\b/.exec(comment);
    commands.push({ line: i + 1, text: cmd, args, exit: exit ? Number(exit[1]) : 0 });
  });
  return { commands, problems };
}

/** Options whose value is a file (or folder) the command writes. */
const WRITES = new Set(['--out', '--record', '--plot', '--junit']);

/** What a command writes (the values of --out, --record, --plot, --junit) and what files it reads. */
export function filesOf(args: readonly string[]): { writes: string[]; reads: string[] } {
  const writes: string[] = [];
  const reads: string[] = [];
  args.forEach((a, i) => {
    const before = args[i - 1] ?? '';
    if (a.startsWith('-')) return;
    if (WRITES.has(before)) writes.push(a);
    else if (/\.(ndjson|mcap|json|js|mjs|csv)$/.test(a) || a.startsWith('runs/')) reads.push(a);
  });
  return { writes, reads };
}
