// docs/reference/cli.md, generated from the commands' option tables: every command (and subcommand)
// is run with --help in this process, and the arguments of each `formatHelp` call (src/cli/args.ts:
// the command, its summary, its usage, its option table and the text after it) are taken as they are
// given. The test that checks the page (tests/docs-reference.test.ts) wraps formatHelp with
// `HELP_PAGES` (vi.mock); `npm run docs:reference` writes it.
import { COMMANDS, main } from '../../../src/cli/main.js';
import type { OptionSpecs } from '../../../src/cli/args.js';
import { cell } from './rig-file.js';

/** The arguments of one formatHelp call. */
export interface HelpPage {
  command: string;
  summary: string;
  usage: string;
  specs: OptionSpecs;
  more: string;
}

/** The formatHelp calls seen, filled by the test's wrapper of formatHelp. */
export const HELP_PAGES: HelpPage[] = [];

/** What `twolink ...argv` prints on stdout, run in this process, and the help pages it formatted. */
async function helpOf(argv: string[]): Promise<{ text: string; pages: HelpPage[]; code: number }> {
  const write = process.stdout.write.bind(process.stdout);
  let text = '';
  const from = HELP_PAGES.length;
  process.stdout.write = (chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  };
  try {
    const code = await main(argv);
    return { text, pages: HELP_PAGES.slice(from), code };
  } finally {
    process.stdout.write = write;
  }
}

/** The subcommands a command's help names: `twolink model id ...`, `twolink plot run --help`. */
function subcommands(command: string, help: string): string[] {
  const found = [...help.matchAll(new RegExp(`twolink ${command} ([a-z]+)\\b(?![.|])`, 'g'))].map((m) => m[1]!);
  return [...new Set(found)];
}

function fence(text: string): string[] {
  return ['```text', text.trimEnd(), '```', ''];
}

function renderPage(p: HelpPage, out: string[]): void {
  out.push(`${p.summary.replace(/^./, (c) => c.toUpperCase())}.`, '', ...fence(`twolink ${p.usage}`));
  out.push('| Option | Value | Meaning |', '| --- | --- | --- |');
  for (const [name, s] of Object.entries(p.specs)) {
    const flag = `--${name}${s.short ? `, -${s.short}` : ''}`;
    const value = s.type === 'boolean' ? '(flag)' : `${s.arg ?? 'VALUE'}${s.multiple ? ' (repeatable)' : ''}`;
    out.push(`| \`${flag}\` | ${cell(value)} | ${cell(s.help)} |`);
  }
  out.push('');
  if (p.more) out.push(...fence(p.more));
}

/** docs/reference/cli.md. */
export async function cliReference(): Promise<string> {
  const out = [
    '# The command line',
    '',
    '<!-- Generated from the option tables of src/cli/*.ts (each command run with --help) by',
    '     tests/helpers/reference/cli.ts: do not edit by hand; `npm run docs:reference` rewrites it. -->',
    '',
    'Every command takes `--help`. Bad arguments exit with code 2 and a message naming the argument;',
    'options that take a value may be written `--q 0.1,0.2` or `--q=0.1,0.2` (a negative value too: `--q0 -1.2,0.5`).',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...Object.entries(COMMANDS).map(([name, c]) => `| [\`${name}\`](#twolink-${name}) | ${cell(c.summary)} |`),
    '',
  ];
  for (const [name, c] of Object.entries(COMMANDS)) {
    out.push(`## twolink ${name}`, '', `${cell(c.summary).replace(/^./, (x) => x.toUpperCase())}. For example:`, '', ...fence(c.example));
    const top = await helpOf([name, '--help']);
    if (top.code !== 0) throw new Error(`twolink ${name} --help exited with ${top.code}`);
    for (const p of top.pages) renderPage(p, out);
    if (top.pages.length === 0) out.push(...fence(top.text));
    for (const sub of top.pages.length === 0 ? subcommands(name, top.text) : []) {
      const h = await helpOf([name, sub, '--help']);
      if (h.code !== 0) throw new Error(`twolink ${name} ${sub} --help exited with ${h.code}`);
      out.push(`### twolink ${name} ${sub}`, '');
      for (const p of h.pages) renderPage(p, out);
      if (h.pages.length === 0) out.push(...fence(h.text));
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
