// After `tsc`: zod as one file in dist/vendor/zod.js, and dist's imports of 'zod' pointed at it.
//
// Why: zod 4's ESM build is ~95 modules, and Node 20 loads ES modules one file at a time (resolve,
// read, compile, link each). For `twolink model fk` that was about half of the command's start-up
// beyond Node's own; one bundled file loads in a fraction of that (measured by src/bench/startup.ts).
// Only dist/ changes: the sources, their types and the tests keep importing 'zod' as usual, and a
// dist/ built by plain `tsc` still works (it just starts slower).
//
// The bundle is made by rolldown (the bundler vite uses) and only when zod's version changes; the
// rewrite touches only files whose import still says 'zod'. Usage: node scripts/vendor-zod.mjs
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const out = join(dist, 'vendor', 'zod.js');
const zodPkg = JSON.parse(readFileSync(join(root, 'node_modules', 'zod', 'package.json'), 'utf8'));
const stamp = `// zod ${zodPkg.version}, bundled by scripts/vendor-zod.mjs\n`;

if (!existsSync(out) || !readFileSync(out, 'utf8').startsWith(stamp)) {
  const { build } = await import('rolldown');
  mkdirSync(dirname(out), { recursive: true });
  const result = await build({ input: 'zod', cwd: root, platform: 'node', logLevel: 'warn', write: false, output: { format: 'esm', minify: true } });
  const chunk = result.output.find((o) => o.type === 'chunk');
  if (!chunk || !/\bz\b/.test(chunk.exports.join(' '))) throw new Error(`vendor-zod: rolldown's bundle of zod does not export z (${chunk?.exports.join(', ')})`);
  writeFileSync(out, stamp + chunk.code);
}

/** Every .js file under `dir`. */
function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? (name === 'vendor' ? [] : jsFiles(p)) : p.endsWith('.js') ? [p] : [];
  });
}

let rewritten = 0;
for (const file of jsFiles(dist)) {
  const text = readFileSync(file, 'utf8');
  if (!/from ['"]zod['"]/.test(text)) continue;
  let rel = relative(dirname(file), out).split('\\').join('/');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  writeFileSync(file, text.replace(/from (['"])zod\1/g, `from '${rel}'`));
  rewritten++;
}
if (rewritten) process.stdout.write(`vendor-zod: ${rewritten} file(s) of dist/ now import ${relative(root, out)}\n`);
