// The shape of the code (issue 13): imports point one way between the folders of src, no folder
// cycle, no source file over 650 lines without a reason at its top, no function over 80 lines. The
// import lines are read with TypeScript's parser (static imports and re-exports, `import('...')`
// in code and in types). What breaks a rule today and is not fixed yet is listed below, each with why;
// a new breach fails, and so does a listed import that is gone (take it off the list).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, dirname, relative, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/**
 * Which modules each module may import. Modules are the folders of src; of the files at its top,
 * `version` is a leaf, `index` and `testing` (the public entry points) may import anything.
 * cli -> (tui, record, identify, hil, setup) -> run -> control -> (transport, model), setup -> identify
 * (its gentle identification step); transport ->
 * protocol; mock -> (protocol, model); model imports nothing; viz (URDF, Foxglove scene, live view) sits
 * under record, cli and bench. config (the rig file, files), time (the
 * clocks) and telemetry (the tick format) are below everything that uses them.
 */
const ALLOWED: Record<string, readonly string[]> = {
  model: [],
  telemetry: ['config'],
  time: [],
  protocol: [],
  version: ['protocol'],
  config: ['model', 'protocol', 'time'],
  transport: ['protocol', 'config', 'time', 'model'],
  mock: ['protocol', 'model', 'config', 'time'],
  control: ['transport', 'model', 'config', 'time', 'telemetry'],
  run: ['control', 'mock', 'transport', 'protocol', 'model', 'config', 'time', 'telemetry', 'version'],
  viz: ['model', 'config', 'telemetry', 'version'],
  record: ['viz', 'run', 'model', 'config', 'time', 'telemetry', 'version'],
  identify: ['record', 'run', 'control', 'model', 'config', 'time', 'telemetry'],
  tui: ['run', 'control', 'model', 'config', 'time', 'telemetry'],
  hil: ['record', 'run', 'mock', 'control', 'model', 'config', 'time', 'telemetry', 'version'],
  setup: ['identify', 'record', 'run', 'mock', 'control', 'transport', 'protocol', 'model', 'config', 'time', 'telemetry'],
  tune: ['setup', 'record', 'run', 'mock', 'control', 'transport', 'protocol', 'model', 'config', 'time', 'telemetry'],
  cli: ['viz', 'tune', 'tui', 'record', 'identify', 'hil', 'setup', 'run', 'mock', 'control', 'transport', 'protocol', 'model', 'config', 'time', 'telemetry', 'version'],
  bench: ['viz', 'tune', 'cli', 'tui', 'record', 'identify', 'hil', 'setup', 'run', 'mock', 'control', 'transport', 'protocol', 'model', 'config', 'time', 'telemetry', 'version'],
  index: ['*'],
  testing: ['*'],
};

/** Imports that break the rules today: `file -> module`, and why it is not fixed yet. */
const KNOWN: Record<string, string> = {
};

/** Longest source file [lines] without a reason at its top ("over 650 lines because ..."). */
const MAX_FILE_LINES = 650;
/** Files over it today without that reason, and why they are let be. */
const LONG_FILES: Record<string, string> = {
};
const MAX_FUNCTION_LINES = 80;

/**
 * Functions over 80 lines when this list was written (`file:name`, `(arrow)` for an unnamed one), to
 * split; no new one may come. Their sizes change with the work under way, so only the names are kept.
 */
const LONG_FUNCTIONS = new Set<string>([
]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The module of a file under src: its folder, or its own name for a file at the top. */
function moduleOf(file: string): string {
  const rel = relative(SRC, file).split('/');
  return rel.length > 1 ? rel[0]! : rel[0]!.replace(/\.[jt]s$/, '');
}

const files = sources(SRC).map((path) => ({ path, name: relative(join(SRC, '..'), path), source: ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true) }));

/** Relative module specifiers a file imports: import/export ... from, import('...') in code and types. */
function importsOf(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) out.push(n.arguments[0].text);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out.filter((s) => s.startsWith('.'));
}

/** `file -> module` for every import that leaves the file's module. */
const edges = files.flatMap((f) =>
  importsOf(f.source)
    .map((spec) => moduleOf(normalize(join(dirname(f.path), spec))))
    .filter((to, i, all) => to !== moduleOf(f.path) && all.indexOf(to) === i)
    .map((to) => ({ from: moduleOf(f.path), file: f.name, to })),
);

describe('architecture', () => {
  it('every module of src is in the table of allowed imports', () => {
    const modules = new Set(files.map((f) => moduleOf(f.path)));
    expect([...modules].filter((m) => !(m in ALLOWED))).toEqual([]);
  });

  it('the allowed imports have no cycle (so the modules are layers)', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycle: string[] = [];
    const visit = (m: string, path: string[]): void => {
      if (state.get(m) === 'done') return;
      if (state.get(m) === 'open') return void cycle.push([...path, m].join(' -> '));
      state.set(m, 'open');
      for (const to of ALLOWED[m] ?? []) if (to !== '*') visit(to, [...path, m]);
      state.set(m, 'done');
    };
    for (const m of Object.keys(ALLOWED)) visit(m, []);
    expect(cycle).toEqual([]);
  });

  it('imports point one way: none outside the table but the listed ones, and every listed one still exists', () => {
    const breaches = edges.filter((e) => !ALLOWED[e.from]!.includes('*') && !ALLOWED[e.from]!.includes(e.to)).map((e) => `${e.file} -> ${e.to}`);
    expect(breaches.filter((b) => !(b in KNOWN)), 'new imports against the direction').toEqual([]);
    expect(Object.keys(KNOWN).filter((k) => !breaches.includes(k)), 'fixed: take them off KNOWN').toEqual([]);
  });

  it('one composition: a link is built at one site in src (run/compose.ts), whatever opens a board', () => {
    const sites: Record<string, string[]> = { 'new LineLink': [], 'new WiredLink': [], 'createFirmataLink(': [] };
    for (const f of files) {
      const visit = (n: ts.Node): void => {
        const at = `${f.name}:${f.source.getLineAndCharacterOfPosition(n.getStart(f.source)).line + 1}`;
        if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && `new ${n.expression.text}` in sites) sites[`new ${n.expression.text}`]!.push(at);
        else if (ts.isNewExpression(n) && ts.isPropertyAccessExpression(n.expression) && `new ${n.expression.name.text}` in sites) sites[`new ${n.expression.name.text}`]!.push(at);
        else if (ts.isCallExpression(n) && n.expression.getText(f.source).endsWith('createFirmataLink')) sites['createFirmataLink(']!.push(at);
        ts.forEachChild(n, visit);
      };
      visit(f.source);
    }
    for (const [what, at] of Object.entries(sites)) {
      expect(at, what).toHaveLength(1);
      expect(at[0], what).toMatch(/^src\/run\/compose\.ts:/);
    }
  });

  it('model is pure: no node:* import, no clock, no I/O', () => {
    for (const f of files.filter((x) => moduleOf(x.path) === 'model')) {
      const text = f.source.text;
      expect(text, f.name).not.toMatch(/from ['"]node:|Date\.now\(|performance\.now\(|process\./);
    }
  });

  it(`no source file over ${MAX_FILE_LINES} lines without the reason at its top`, () => {
    for (const f of files) {
      const lines = f.source.getLineAndCharacterOfPosition(f.source.end).line + 1;
      if (lines > MAX_FILE_LINES && !(f.name in LONG_FILES)) expect(f.source.text.slice(0, 2000), `${f.name} has ${lines} lines: say why at its top ("over ${MAX_FILE_LINES} lines because ...")`).toMatch(new RegExp(`over ${MAX_FILE_LINES} lines`));
    }
  });

  it(`no function over ${MAX_FUNCTION_LINES} lines but the listed ones`, () => {
    const found: Record<string, number> = {};
    for (const f of files) {
      const sf = f.source;
      const visit = (n: ts.Node): void => {
        if (ts.isFunctionLike(n) && 'body' in n && n.body) {
          const lines = sf.getLineAndCharacterOfPosition(n.end).line - sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
          const name = 'name' in n && n.name ? n.name.getText(sf) : '(arrow)';
          const key = `${f.name}:${name}`;
          if (lines > MAX_FUNCTION_LINES) found[key] = Math.max(found[key] ?? 0, lines);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    const added = Object.entries(found).filter(([k]) => !LONG_FUNCTIONS.has(k));
    expect(added.map(([k, n]) => `${k}: ${n} lines`)).toEqual([]);
  });
});
