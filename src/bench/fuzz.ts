/**
 * Fuzzing the outside inputs: rig files, recordings and command-line arguments, mutated at random.
 * What must hold: a clear error naming the input, or a result with no NaN in it; never a stack trace
 * or a hang. The decoders' fuzzing (line protocol, Firmata) is fuzz-decoders.ts.
 */
import { INPUT_ERROR_NAMES } from '../cli/input-errors.js';
import { mulberry32 as rng } from '../model/random.js';

export { fuzzFirmata, fuzzLine, type FuzzFigures } from './fuzz-decoders.js';

/** How the inputs of one fuzzer came out. `stackTraces`, `hangs` and `nonFinite` must be 0. */
export interface InputFuzzFigures {
  cases: number;
  /** Inputs taken as valid (and then exercised: computed, run, compared). */
  accepted: number;
  /** Inputs refused with one line naming what is wrong. */
  clearErrors: number;
  /** Anything else thrown or printed as a stack: a bug. */
  stackTraces: number;
  /** Cases that took longer than the budget (or were killed for it). */
  hangs: number;
  /** Accepted inputs that gave a NaN or an Infinity (or a null in JSON output). */
  nonFinite: number;
  /** The first few bad cases, for the report. */
  examples: string[];
  seconds: number;
}

function figures(): InputFuzzFigures {
  return { cases: 0, accepted: 0, clearErrors: 0, stackTraces: 0, hangs: 0, nonFinite: 0, examples: [], seconds: 0 };
}

function note(f: InputFuzzFigures, what: 'stackTraces' | 'hangs' | 'nonFinite', example: string): void {
  f[what]++;
  if (f.examples.length < 8) f.examples.push(`${what}: ${example.slice(0, 300)}`);
}

function isClear(e: unknown): boolean {
  return e instanceof Error && INPUT_ERROR_NAMES.has(e.name) && !e.message.includes('\n') && e.message.length > 0;
}

/** A non-finite number in the model's or a run's output: the fuzz's finding, told apart by its class (not its words). */
class NonFiniteOutput extends RangeError {}

/** The first non-finite number in a value (a path), or undefined. */
function nonFiniteIn(v: unknown, path = '', depth = 0): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path || '(value)';
  if (depth > 20 || v === null || typeof v !== 'object') return undefined;
  if (ArrayBuffer.isView(v)) {
    const a = v as unknown as ArrayLike<number>;
    for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) return `${path}[${i}]`;
    return undefined;
  }
  for (const [k, x] of Object.entries(v)) {
    const p = nonFiniteIn(x, `${path}.${k}`, depth + 1);
    if (p) return p;
  }
  return undefined;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Paths to every leaf of a JSON value. */
function leaves(v: Json, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v !== null && typeof v === 'object') {
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
    for (const [k, x] of entries) leaves(x, [...path, k], out);
  } else {
    out.push(path);
  }
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json | undefined): void {
  let o = root as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(o)) o.splice(last as number, 1);
    else delete o[last];
  } else {
    o[last] = value;
  }
}

function getAt(root: Json, path: (string | number)[]): Json {
  let o: Json = root;
  for (const k of path) o = (o as Record<string | number, Json>)[k]!;
  return o;
}

/** Values that break a number field in interesting ways. Some are text: JSON cannot carry them. */
const ODD_NUMBERS = ['0', '-1', '1e308', '1.8e308', '-1.8e308', '1e15', '9e15', '1e-300', '-0', '1e-9', '1e6', '12345678901234567890', '3'];
const ODD_VALUES: Json[] = [null, true, 'NaN', '0.3', [], {}, [1, 2, 3], ''];

/** A mutated JSON text of `base`: values, keys and structure changed, or the text itself cut. */
function mutateJsonText(base: Json, r: () => number): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const v = JSON.parse(JSON.stringify(base)) as Json;
  const paths = leaves(v);
  const ops = 1 + Math.floor(r() * 3);
  const marks: [string, string][] = [];
  for (let k = 0; k < ops; k++) {
    const p = pick(paths);
    const op = r();
    const old = getAt(v, p);
    if (op < 0.35) {
      const mark = `"@@${k}@@"`;
      setAt(v, p, mark.slice(1, -1));
      marks.push([mark, pick(ODD_NUMBERS)]);
    } else if (op < 0.55 && typeof old === 'number') {
      setAt(v, p, old * 10 ** Math.round(r() * 40 - 20) * (r() < 0.2 ? -1 : 1));
    } else if (op < 0.7) {
      setAt(v, p, pick(ODD_VALUES));
    } else if (op < 0.8) {
      setAt(v, p, undefined);
    } else if (op < 0.86) {
      const mark = `"@@${k}@@"`;
      setAt(v, p, mark.slice(1, -1));
      const depth = 1000 + Math.floor(r() * 9000);
      marks.push([mark, `${'['.repeat(depth)}1${']'.repeat(depth)}`]);
    } else if (op < 0.9 && p.length > 1) {
      const parent = getAt(v, p.slice(0, -1));
      if (parent && typeof parent === 'object' && !Array.isArray(parent))
        (parent as Record<string, Json>)[`${String(p[p.length - 1])}X`] = 1;
    } else if (op < 0.95 && p.length > 1) {
      const parent = getAt(v, p.slice(0, -1));
      if (Array.isArray(parent)) parent.push(parent[0]!);
    } else {
      setAt(
        v,
        p,
        Array.from({ length: 1000 + Math.floor(r() * 100_000) }, () => 1),
      );
    }
  }
  let text = JSON.stringify(v, null, 1);
  for (const [m, t] of marks) text = text.replace(m, t);
  const cut = r();
  if (cut < 0.04) text = text.slice(0, Math.floor(r() * text.length));
  else if (cut < 0.07) {
    const at = Math.floor(r() * text.length);
    text = text.slice(0, at) + String.fromCharCode(Math.floor(r() * 128)) + text.slice(at + 1);
  }
  return text;
}

/**
 * Mutated rig files (from the rigs that ship), each loaded as `loadRig` does; the accepted ones are
 * computed on (inverse and forward dynamics, energy over the joint limits), and the first `runs` of
 * them with a plant are run in virtual time (the built-in `point` trajectory through the loop, the
 * protocol and the mock plant): every number must stay finite. A case over `budgetS` counts as a hang.
 */
export async function fuzzRigFiles(
  n: number,
  seed = 3,
  opts: { runs?: number; budgetS?: number; dir?: string } = {},
): Promise<InputFuzzFigures> {
  const { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { loadRig } = await import('../config/load.js');
  const { computeEnergy, computeForwardDynamics, computeInverseDynamics, createActuatedArmData, createActuatedArmModel } =
    await import('../model/actuated.js');
  const { builtinPath } = await import('../model/builtins.js');
  const rigsDir = opts.dir ?? 'rigs';
  const bases = readdirSync(rigsDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${rigsDir}/${f}`, 'utf8')) as Json);
  const tmp = mkdtempSync(`${tmpdir()}/twolink-fuzz-rig-`);
  const r = rng(seed);
  const f = figures();
  const t0 = performance.now();
  let runs = opts.runs ?? 5;
  const budget = (opts.budgetS ?? 30) * 1000;
  try {
    for (let k = 0; k < n; k++) {
      const file = `${tmp}/rig${k}.json`;
      writeFileSync(file, mutateJsonText(bases[Math.floor(r() * bases.length)]!, r));
      f.cases++;
      const c0 = performance.now();
      try {
        const rig = loadRig(file);
        f.accepted++;
        const m = createActuatedArmModel(rig);
        const data = createActuatedArmData(m);
        const n2 = rig.joints;
        for (let s = 0; s <= 8; s++) {
          const q = rig.limits.slice(0, n2).map((l) => l.min + ((l.max - l.min) * s) / 8);
          const qd = rig.limits.slice(0, n2).map((l) => l.maxVel * (s / 8 - 0.5));
          const out = {
            id: computeInverseDynamics(m, data, q, qd, qd),
            fd: computeForwardDynamics(m, data, q, qd, q),
            e: computeEnergy(m, data, q, qd),
          };
          const bad = nonFiniteIn(out);
          if (bad) throw new NonFiniteOutput(`non-finite ${bad}`);
        }
        if (rig.plant && runs > 0 && builtinPath(rig.arm, 'point')) {
          runs--;
          const { virtualRun } = await import('../run/virtual.js');
          const run = await virtualRun(rig, [builtinPath(rig.arm, 'point')!], { keepRows: true, maxSeconds: 8 });
          const bad = nonFiniteIn(run.rows.map((row) => row.slice(0, 40))) ?? nonFiniteIn(run.summary);
          if (bad) throw new NonFiniteOutput(`non-finite ${bad} in a virtual run (stop: ${run.summary.stopReason})`);
        }
      } catch (e) {
        if (isClear(e)) f.clearErrors++;
        else if (e instanceof NonFiniteOutput) note(f, 'nonFinite', `${file}: ${e.message}`);
        else note(f, 'stackTraces', `${file}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
      if (performance.now() - c0 > budget) note(f, 'hangs', `${file}: ${((performance.now() - c0) / 1000).toFixed(1)} s`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  f.seconds = (performance.now() - t0) / 1000;
  return f;
}

/** A mutated recording: lines swapped, repeated, dropped or cut, numbers made odd, a huge line. */
function mutateRecording(lines: readonly string[], r: () => number): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const out = lines.slice();
  const ops = 1 + Math.floor(r() * 2);
  for (let k = 0; k < ops; k++) {
    const i = Math.floor(r() * out.length);
    const op = r();
    if (op < 0.2 && i + 1 < out.length) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
    else if (op < 0.3) out.splice(i, 0, out[i]!);
    else if (op < 0.4) out.splice(i, 1);
    else if (op < 0.5) out[i] = out[i]!.slice(0, Math.floor(r() * out[i]!.length));
    else if (op < 0.8) {
      // a number in the line replaced by something odd
      const nums = [...out[i]!.matchAll(/-?\d+(\.\d+)?(e[+-]?\d+)?/g)];
      if (nums.length) {
        const m = pick(nums);
        out[i] =
          out[i]!.slice(0, m.index) +
          pick(['null', '1e308', '-1e308', '"1"', 'true', '[]', '1.8e308', '-0', '1e-320']) +
          out[i]!.slice(m.index + m[0].length);
      }
    } else if (op < 0.85) out.splice(i, 0, `{"kind":"event","event":"x","deep":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    else if (op < 0.9)
      out.splice(
        i,
        0,
        pick([
          '',
          '{}',
          '[]',
          'null',
          '{"kind":"tick"}',
          '{"kind":"header"}',
          '\u0000\u0001',
          '{"kind":"summary","ticks":-1,"stopReason":"x"}',
        ]),
      );
    else if (op < 0.93) out.splice(i, 0, `{"kind":"event","event":"x","pad":"${'x'.repeat(9 << 20)}"}`);
    else out[i] = `${out[i]}\r`;
  }
  return `${out.join('\n')}${r() < 0.9 ? '\n' : ''}`;
}

/**
 * Mutated recordings (from `base`, a valid one), each read and compared as `twolink compare` does:
 * refused with the line, or compared with finite figures.
 */
export async function fuzzRecordings(n: number, base: string, seed = 4, opts: { budgetS?: number } = {}): Promise<InputFuzzFigures> {
  const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { loadRecording } = await import('../record/read.js');
  const { COMPARE_FIELDS, compareRecordings } = await import('../record/compare.js');
  const lines = readFileSync(base, 'utf8').trimEnd().split('\n');
  const tmp = mkdtempSync(`${tmpdir()}/twolink-fuzz-rec-`);
  const r = rng(seed);
  const f = figures();
  const t0 = performance.now();
  const budget = (opts.budgetS ?? 30) * 1000;
  try {
    for (let k = 0; k < n; k++) {
      const file = `${tmp}/rec${k}.ndjson`;
      writeFileSync(file, mutateRecording(lines, r));
      f.cases++;
      const c0 = performance.now();
      try {
        const a = await loadRecording(file, COMPARE_FIELDS);
        f.accepted++;
        const report = compareRecordings(a);
        const bad = nonFiniteIn(report);
        if (bad) note(f, 'nonFinite', `${file}: ${bad}`);
      } catch (e) {
        if (isClear(e)) f.clearErrors++;
        else note(f, 'stackTraces', `${file}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
      if (performance.now() - c0 > budget) note(f, 'hangs', `${file}: ${((performance.now() - c0) / 1000).toFixed(1)} s`);
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  f.seconds = (performance.now() - t0) / 1000;
  return f;
}

/** One command line for the argument fuzzer, and whether its JSON output may hold a null by design. */
interface ArgCase {
  args: string[];
  nullsAllowed?: boolean;
}

/** The files the argument cases name: a recording, a FIFO, a directory, a rig nested too deep, a file of one long line. */
type CaseFiles = { recording: string; fifo: string; dir: string; deepRig: string; longLine: string };

/**
 * The argument cases: the probe's own (each item of issue 12 that is about arguments and files) and
 * `random` mutations of valid command lines (odd numbers, odd files, stray and unknown arguments).
 * `files` are paths the cases use: a valid recording, a FIFO, a directory, a deeply nested rig file.
 */
export function argumentCases(random: number, files: CaseFiles, seed = 5): ArgCase[] {
  const valid = validLines(files.recording);
  const odd = oddValues(files);
  const r = rng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const out: ArgCase[] = probeLines(files).map((args) => ({ args }));
  for (let k = 0; k < random; k++) {
    const args = mutated(pick(valid).slice(), r, pick, odd);
    out.push({ args, nullsAllowed: args[0] === 'compare' });
  }
  return out;
}

/** The fixed hostile command lines: outputs that cannot be written, inputs that are no file, huge numbers, bad injections, stray words. */
function probeLines(files: CaseFiles): string[][] {
  const SEED = 'rigs/seed-arm.json';
  const MOCK = 'rigs/mock-arm.json';
  const rec = files.recording;
  return [
    ['run', '--rig', MOCK, '--mock', '--traj', 'point', '--record', '/nonexistent/x.ndjson'],
    ['run', '--rig', MOCK, '--mock', '--traj', 'point', '--record', files.dir],
    ['compare', rec, '--export', 'csv', '--out', '/dev/full'],
    ['compare', rec, '--export', 'mcap', '--out', '/dev/full'],
    ['compare', rec, '--plot', '/nonexistent/x.svg'],
    ['model', 'id', '--rig', '/dev/zero', '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'],
    ['model', 'id', '--rig', files.fifo, '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'],
    ['model', 'id', '--rig', files.dir, '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'],
    ['model', 'id', '--rig', files.deepRig, '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'],
    ['compare', files.longLine],
    ['compare', files.dir],
    ['compare', files.fifo],
    ['model', 'id', '--rig', SEED, '--q=1e308,1e308', '--qd', '0,0', '--qdd', '0,0'],
    ['model', 'fd', '--rig', SEED, '--q', '0,0', '--qd=1e308,1e308', '--tau', '0,0'],
    ['model', 'fk', '--rig', SEED, '--q', '0,0', '--qd=1e200,1e200'],
    ['sim', '--rig', SEED, '--q0', '0,0', '--qd0', '1e6,1e6', '--integrator', 'euler', '--dt', '0.01', '--duration', '1'],
    ['sim', '--rig', SEED, '--q0', '0,0', '--qd0', '1e3,1e3', '--integrator', 'euler', '--dt', '0.01', '--duration', '1'],
    ['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1e6', '--dt', '1e-7'],
    ...['payload=abc', 'payload=-5', 'latency=-50', 'drop=NaN', 'busy=1e9', 'stall=3', 'silent=1', 'garbage=1e12'].map((x) => [
      'run',
      '--rig',
      MOCK,
      '--mock',
      '--traj',
      'point',
      '--inject',
      x,
    ]),
    ['run', '--rig', MOCK, '--mock', 'reach'],
    ['model', 'fk', '--rig', SEED, '--q', '0,0', 'extra'],
    ['run', '--rig', 'tests/fixtures/bad-input/rig-firmata-not-pwm.json', '--mock', '--traj', 'point'],
    ['traj', '--rig', SEED, '--space', 'endpoint', '--from', '1,0', '--to', '0.5,0.5', '--duration', '1'],
    ['traj', '--rig', SEED, '--space', 'endpoint', '--from', '0.5,0.5', '--to', '5,5', '--duration', '1'],
    ['traj', '--rig', SEED, '--from', '0,0', '--to', '1,1', '--duration', '1e5', '--rate', '1e5'],
    ['run', '--rig', 'tests/fixtures/bad-input/rig-no-load-speed.json', '--port', '/dev/null', '--traj', 'reach'],
    ['run', '--rig', MOCK, '--mock', '--traj', 'point', '--rate', '100', '--inject', 'payload=0.2'],
  ];
}

/** Valid command lines, which the random cases spoil. */
function validLines(rec: string): string[][] {
  const SEED = 'rigs/seed-arm.json';
  const MOCK = 'rigs/mock-arm.json';
  return [
    ['model', 'id', '--rig', SEED, '--q', '0.1,0.2', '--qd', '0,0', '--qdd', '0,0'],
    ['model', 'fd', '--rig', SEED, '--q', '0.1,0.2', '--qd', '0,0', '--tau', '1,0.5', '--force', '1,1'],
    ['model', 'fk', '--rig', SEED, '--q', '20,70', '--qd', '1,1', '--deg'],
    ['model', 'ik', '--rig', SEED, '--xy', '0.5,0.5', '--elbow', 'up'],
    ['model', 'jacobian', '--rig', SEED, '--q', '0.2,0.9', '--qd', '1,1'],
    ['sim', '--rig', SEED, '--q0', '-1.2,0.5', '--duration', '0.5', '--dt', '0.001', '--integrator', 'rk4'],
    ['traj', '--rig', SEED, '--space', 'endpoint', '--from', '0.9,0', '--to', '0.5,0.5', '--duration', '1', '--rate', '20'],
    ['compare', rec, '--json'],
    ['run', '--rig', MOCK, '--mock', '--traj', 'point', '--max-seconds', '0.3', '--json', '--inject', 'payload=0.2@0.1'],
  ];
}

/** Values that are no good anywhere (or only just good). */
function oddValues(files: CaseFiles): string[] {
  return [
    '1e308',
    '-1e308',
    'NaN',
    'Infinity',
    '',
    'abc',
    '0x10',
    '1,2,3',
    '1,,2',
    '-1',
    '1e-320',
    '0',
    'é',
    '--',
    'x'.repeat(5000),
    '/dev/zero',
    files.fifo,
    files.dir,
    '/nonexistent/x',
    '/dev/full',
    files.deepRig,
  ];
}

/** A valid line spoiled at random: a value made odd, a word added, an option dropped, a flag put in. */
function mutated(args: string[], r: () => number, pick: <T>(a: readonly T[]) => T, odd: readonly string[]): string[] {
  const op = r();
  const values = args.map((a, i) => (i > 0 && !a.startsWith('--') && args[i - 1]!.startsWith('--') ? i : -1)).filter((i) => i >= 0);
  if (op < 0.7 && values.length) {
    const i = pick(values);
    const v = pick(odd);
    if (v.startsWith('-')) {
      args[i - 1] = `${args[i - 1]}=${v}`;
      args.splice(i, 1);
    } else {
      args[i] = v;
    }
  } else if (op < 0.8) args.push(pick(['stray', '--bogus', '-x', '--rig']));
  else if (op < 0.9 && values.length) args.splice(pick(values) - 1, 2);
  else args.splice(1 + Math.floor(r() * (args.length - 1)), 0, pick(['--help', '--deg', '--json', '--', 'extra']));
  return args;
}

/** How one command line came out. */
export type ArgOutcome = 'clear' | 'ran' | 'stack' | 'unclear' | 'hang' | 'nonFinite';

/** Classifies a finished `twolink` process. */
export function classifyRun(
  res: { code: number | null; signal: string | null; stdout: string; stderr: string; timedOut: boolean },
  nullsAllowed = false,
): ArgOutcome {
  if (res.timedOut) return 'hang';
  if (/\n\s+at \S.*(:\d+:\d+\)?|\(node:)/.test(res.stderr) || /^twolink: \w*Error: /m.test(res.stderr) || res.signal !== null)
    return 'stack';
  const errLines = res.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('twolink: '));
  if (res.code === 2) return res.stderr.trim().split('\n').length === 1 && errLines.length === 1 ? 'clear' : 'unclear';
  const json = res.stdout.split('\n').filter((l) => l.startsWith('{'));
  if (json.some((l) => /\b(NaN|Infinity)\b/.test(l) || (!nullsAllowed && /[:[,]null\b/.test(l)))) return 'nonFinite';
  return 'ran';
}

/**
 * Runs `twolink` (bin/twolink.js, so dist/ must be built) on each case, `parallel` at a time, each
 * killed after `budgetS` (a hang). Counts the outcomes.
 */
export async function fuzzArguments(
  cases: readonly ArgCase[],
  opts: { bin: string; cwd: string; parallel?: number; budgetS?: number },
): Promise<InputFuzzFigures & { unclear: number }> {
  const { spawn } = await import('node:child_process');
  const f = { ...figures(), unclear: 0 };
  const t0 = performance.now();
  const one = (c: ArgCase): Promise<void> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [opts.bin, ...c.args], { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout.on('data', (d: Buffer) => (stdout.length < 1 << 20 ? (stdout += d.toString()) : undefined));
      child.stderr.on('data', (d: Buffer) => (stderr.length < 1 << 20 ? (stderr += d.toString()) : undefined));
      const timer = setTimeout(
        () => {
          timedOut = true;
          child.kill('SIGKILL');
        },
        (opts.budgetS ?? 30) * 1000,
      );
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        f.cases++;
        const outcome = classifyRun({ code, signal: timedOut ? null : signal, stdout, stderr, timedOut }, c.nullsAllowed);
        const what = `twolink ${c.args.map((a) => (a.length > 40 ? `${a.slice(0, 20)}...` : a)).join(' ')}: exit ${code}: ${stderr.trim().slice(0, 200)}`;
        if (outcome === 'clear') f.clearErrors++;
        else if (outcome === 'ran') f.accepted++;
        else if (outcome === 'unclear') {
          f.unclear++;
          if (f.examples.length < 8) f.examples.push(`unclear: ${what}`);
        } else note(f, outcome === 'stack' ? 'stackTraces' : outcome === 'hang' ? 'hangs' : 'nonFinite', what);
        resolve();
      });
    });
  const queue = cases.slice();
  const workers = Array.from({ length: opts.parallel ?? 2 }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) await one(c);
  });
  await Promise.all(workers);
  f.seconds = (performance.now() - t0) / 1000;
  return f;
}

/**
 * The files the argument cases name, made in `dir`: a FIFO (mkfifo), a directory, a rig file nested
 * 5,000 levels deep, and a recording whose second line is `longLineMb` MB long.
 */
export async function argumentFiles(
  dir: string,
  recording: string,
  longLineMb: number,
): Promise<{ recording: string; fifo: string; dir: string; deepRig: string; longLine: string }> {
  const { execFileSync } = await import('node:child_process');
  const { mkdirSync, openSync, readFileSync, writeFileSync, writeSync, closeSync } = await import('node:fs');
  const fifo = `${dir}/fifo.json`;
  execFileSync('mkfifo', [fifo]);
  mkdirSync(`${dir}/a-directory.ndjson`);
  const deepRig = `${dir}/deep.json`;
  writeFileSync(
    deepRig,
    readFileSync('rigs/mock-arm.json', 'utf8').replace('"L1": 0.3', `"L1": ${'['.repeat(5000)}0.3${']'.repeat(5000)}`),
  );
  const longLine = `${dir}/long-line.ndjson`;
  const fd = openSync(longLine, 'w');
  writeSync(fd, `${readFileSync(recording, 'utf8').split('\n')[0]}\n{"kind":"event","event":"x","pad":"`);
  const mb = Buffer.alloc(1 << 20, 0x78);
  for (let k = 0; k < longLineMb; k++) writeSync(fd, mb);
  writeSync(fd, '"}\n');
  closeSync(fd);
  return { recording, fifo, dir: `${dir}/a-directory.ndjson`, deepRig, longLine };
}

/**
 * `npm run bench -- --only inputs`: the three input fuzzers at the probe's sizes (2,100 rig files, the
 * argument cases plus 110 mutated command lines, 400 recordings, a 600 MB line among the files).
 */
export async function benchInputs(): Promise<import('./report.js').BenchResult> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { section } = await import('./report.js');
  const REC = 'tests/fixtures/bad-input/recording-ok.ndjson';
  const row = (name: string, f: InputFuzzFigures & { unclear?: number }): [string, string, string] => [
    name,
    `${f.cases} cases in ${f.seconds.toFixed(1)} s`,
    `clear errors ${f.clearErrors}, accepted ${f.accepted}, stack traces ${f.stackTraces}, hangs ${f.hangs}, non-finite outputs ${f.nonFinite}` +
      `${f.unclear !== undefined ? `, errors on more than one line ${f.unclear}` : ''}${f.examples.length ? `; e.g. ${f.examples[0]}` : ''}`,
  ];
  const rigs = await fuzzRigFiles(2100, 3, { runs: 20 });
  const recs = await fuzzRecordings(400, REC, 4);
  const dir = mkdtempSync(`${tmpdir()}/twolink-bench-args-`);
  let args: InputFuzzFigures & { unclear: number };
  try {
    const files = await argumentFiles(dir, REC, 600);
    args = await fuzzArguments(argumentCases(110, files), { bin: 'bin/twolink.js', cwd: process.cwd(), parallel: 2, budgetS: 60 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const figs: Record<string, number> = {};
  for (const [k, f] of [
    ['rig', rigs],
    ['args', args],
    ['recording', recs],
  ] as const) {
    Object.assign(figs, {
      [`${k}Cases`]: f.cases,
      [`${k}Clear`]: f.clearErrors,
      [`${k}StackTraces`]: f.stackTraces,
      [`${k}Hangs`]: f.hangs,
      [`${k}NonFinite`]: f.nonFinite,
    });
  }
  return section(
    'Bad input: fuzzing rig files, arguments and recordings (counts; the last three must be 0)',
    [
      row('rig files (mutated shipped rigs; loaded, computed on, 20 run in virtual time)', rigs),
      row('command lines (the probe cases + mutations; the built CLI, 2 at a time)', args),
      row('recordings (mutated; read and compared)', recs),
    ],
    figs,
  );
}
