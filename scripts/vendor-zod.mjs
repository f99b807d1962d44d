// After `tsc`: zod as one file in dist/vendor/, loaded with V8's code cache, and dist's imports of
// 'zod' pointed at it.
//
// Why: zod 4's ESM build is ~95 modules, and Node 20 loads ES modules one file at a time (resolve,
// read, compile, link each). For `twolink model fk` that was about half of the command's start-up
// beyond Node's own; one bundled file loads in a fraction of that. Compiling that one file (390 kB)
// and the functions its set-up runs was still about 30 ms of CPU: Node 20 has no compile cache for
// ES modules (module.enableCompileCache is Node 22), so the bundle is CommonJS text that
// dist/vendor/zod.js runs through vm.Script with V8's code cache (about 13 ms of CPU). A cache V8
// rejects (another V8, another zod) is ignored and the file compiles as usual; the cache is named by
// V8's version so that Node versions do not reject each other's. Measured by src/bench/startup.ts.
// Only dist/ changes: the sources, their types and the tests keep importing 'zod' as usual, and a
// dist/ built by plain `tsc` still works (it just starts slower).
//
// The bundle is made by rolldown (the bundler vite uses) and only when zod's version changes; the
// cache when the bundle or V8 changes, by running the calculator once (`twolink model fk`: the rig
// file's schema built and parsed). Usage: node scripts/vendor-zod.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const out = join(dist, 'vendor', 'zod.js');
const bundle = join(dist, 'vendor', 'zod.cjs');
const cache = join(dist, 'vendor', `zod.${process.versions.v8}.cache`);
const zodPkg = JSON.parse(readFileSync(join(root, 'node_modules', 'zod', 'package.json'), 'utf8'));
const stamp = `// zod ${zodPkg.version} (English messages only), bundled by scripts/vendor-zod.mjs\n`;

const SHIM = `${stamp}// zod's CommonJS bundle (zod.cjs) run with V8's code cache: see scripts/vendor-zod.mjs.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
const file = new URL('./zod.cjs', import.meta.url);
const cacheFile = new URL(\`./zod.\${process.versions.v8}.cache\`, import.meta.url);
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // no cache (another V8 than the build's): compiled as usual
}
const script = new vm.Script(\`(function (exports, module) {\${readFileSync(file, 'utf8')}\\n})\`, { filename: fileURLToPath(file), cachedData });
const module = { exports: {} };
script.runInThisContext()(module.exports, module);
export const z = module.exports.z;
// The build (scripts/vendor-zod.mjs) asks for the cache once the run has compiled what it uses.
const cacheOut = process.env.TWOLINK_ZOD_CACHE_OUT;
if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
`;

let fresh = false;
if (!existsSync(bundle) || !readFileSync(bundle, 'utf8').startsWith(stamp)) {
  const { build } = await import('rolldown');
  mkdirSync(dirname(bundle), { recursive: true });
  // zod's error messages in its ~50 languages (z.locales) were 44 % of the bundle; twolink's messages
  // are English and it never calls z.config(z.locales.xx()), so z.locales holds English alone
  // (the default zod sets itself): a smaller file to read and a smaller code cache to load.
  const englishOnly = {
    name: 'zod-english-only',
    resolveId: (id) => (/[\\/]locales[\\/]index\.js$/.test(id) ? '\0zod-locales-en' : null),
    load: (id) =>
      id === '\0zod-locales-en'
        ? `export { default as en } from ${JSON.stringify(join(root, 'node_modules', 'zod', 'v4', 'locales', 'en.js'))};`
        : null,
  };
  const result = await build({
    input: 'zod',
    cwd: root,
    platform: 'node',
    logLevel: 'warn',
    write: false,
    plugins: [englishOnly],
    output: { format: 'cjs', exports: 'named', minify: true },
  });
  const chunk = result.output.find((o) => o.type === 'chunk');
  if (!chunk || !/\bz\b/.test(chunk.exports.join(' ')))
    throw new Error(`vendor-zod: rolldown's bundle of zod does not export z (${chunk?.exports.join(', ')})`);
  if (/Ungültig/.test(chunk.code)) throw new Error("vendor-zod: zod's other languages are still in the bundle (its locales moved?)");
  if (/\brequire\(/.test(chunk.code)) throw new Error('vendor-zod: the bundle of zod calls require(): dist/vendor/zod.js gives it none');
  writeFileSync(bundle, stamp + chunk.code);
  fresh = true;
}
if (!existsSync(out) || readFileSync(out, 'utf8') !== SHIM) writeFileSync(out, SHIM);

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

// The code cache: written by one run of the calculator through the shim (to a temporary name, so a
// failed run leaves no half-written cache behind).
if (fresh || !existsSync(cache)) {
  const tmp = `${cache}.tmp`;
  const args = [join(root, 'bin', 'twolink.js'), 'model', 'fk', '--rig', join(root, 'rigs', 'mock-arm.json'), '--q', '0,0'];
  const r = spawnSync(process.execPath, args, {
    cwd: root,
    env: { ...process.env, TWOLINK_ZOD_CACHE_OUT: tmp },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (r.status !== 0 || !existsSync(tmp))
    throw new Error(`vendor-zod: the run that makes zod's code cache failed (exit ${r.status}): ${r.stderr}`);
  renameSync(tmp, cache);
  process.stdout.write(`vendor-zod: ${relative(root, cache)} (V8's code cache of zod)\n`);
}
