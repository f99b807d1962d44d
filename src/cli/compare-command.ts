/**
 * `twolink compare` (errors of a run against its plan and its twin, and against another run, with
 * plots and exports) and `twolink plot` (a run's or a trajectory's figure). The plotting library is
 * loaded only when a figure is asked for.
 */
import { checkWritablePath, writeTextFile, type OutputRules } from '../config/files.js';
import { loadRig } from '../config/load.js';
import type { TickField } from '../telemetry/tick.js';
import { buildPath } from '../model/trajectory.js';
import { alignRuns, COMPARE_FIELDS, compareRecordings, formatReport, type RunAlignment } from '../record/compare.js';
import { loadRecording, recordedRig, RecordingError, type LoadedRecording } from '../record/read.js';
import { resolve } from 'node:path';
import { choiceArg, FORCE_OPTION, formatHelp, numberArg, parse, stringArg, UsageError, type OptionSpecs, type ParsedOf } from './args.js';
import { namedPath, pathSpecFromArgs, TRAJECTORY_OPTIONS } from './traj-args.js';

const helpOpt = { help: { type: 'boolean', short: 'h', help: 'this help' } } as const satisfies OptionSpecs;

const FIGURE_OPTIONS = {
  smooth: {
    type: 'string',
    arg: 'S',
    help: 'window of the smoothing differentiator for measured acceleration and jerk [s] (default 0.08; jerk: twice that)',
  },
  points: { type: 'string', arg: 'N', help: 'points per curve at most (default 600)' },
  from: { type: 'string', arg: 'S', help: 'plot from this loop time [s]' },
  to: { type: 'string', arg: 'S', help: 'plot up to this loop time [s]' },
  title: { type: 'string', arg: 'TEXT', help: 'title of the figure' },
} as const satisfies OptionSpecs;

const COMPARE_OPTIONS = {
  json: { type: 'boolean', help: 'print the report as one JSON object' },
  plot: { type: 'string', arg: 'FILE', help: 'write the figure: FILE.svg (a picture) or FILE.html (a page that needs no network)' },
  export: {
    type: 'string',
    arg: 'csv|mcap',
    help: 'write the first recording as CSV (spreadsheets, PlotJuggler) or MCAP (Foxglove) to --out',
  },
  out: { type: 'string', arg: 'FILE', help: 'where --export writes' },
  force: FORCE_OPTION,
  ...FIGURE_OPTIONS,
  ...helpOpt,
} as const satisfies OptionSpecs;

/** Input errors of this module's edges (a bad recording) leave like the CLI's other input errors. */
async function asInput<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof RecordingError) throw new UsageError(e.message);
    throw e;
  }
}

/** The figure's file name and kind (its extension); whether it can be written is checked after every argument ({@link checkFigure}). */
function figureFile(value: string | boolean | string[] | undefined, name: string): { file: string; kind: 'svg' | 'html' } {
  const file = stringArg(value, name, 'a file ending in .svg or .html');
  const m = /\.(svg|html?)$/i.exec(file);
  if (!m) throw new UsageError(`--${name}: "${file}" must end in .svg (a picture) or .html (a page)`);
  return { file, kind: m[1]!.toLowerCase() === 'svg' ? 'svg' : 'html' };
}

/** The figure's file can be written (after the arguments: a bad one is never reported as an output that exists). */
function checkFigure<T extends { file: string }>(out: T, rules: OutputRules): T {
  checkWritablePath(out.file, 'figure', rules);
  return out;
}

interface FigureArgs {
  smoothS: number;
  maxPoints: number;
  from: number;
  to: number;
  title?: string;
}

function figureArgs(v: ParsedOf<typeof FIGURE_OPTIONS>): FigureArgs {
  const from = numberArg(v.from, 'from', { default: Number.NEGATIVE_INFINITY, unit: 's' });
  const to = numberArg(v.to, 'to', { default: Number.POSITIVE_INFINITY, unit: 's' });
  if (!(to > from)) throw new UsageError(`--to (${to} s) must be later than --from (${from} s)`);
  return {
    smoothS: numberArg(v.smooth, 'smooth', { default: 0.08, min: 0.005, max: 5, unit: 's' }),
    maxPoints: numberArg(v.points, 'points', { default: 600, min: 50, max: 100_000, integer: true }),
    from,
    to,
    ...(typeof v.title === 'string' ? { title: v.title } : {}),
  };
}

function recordings(positionals: string[], command: string): string[] {
  if (positionals.length < 1 || positionals.length > 2) {
    throw new UsageError(
      `${command}: give one or two recordings: run.ndjson|run.mcap [other.ndjson|other.mcap] (got ${positionals.length}; see twolink ${command} --help)`,
    );
  }
  return positionals;
}

async function writeFigure(
  spec: import('vega-lite').TopLevelSpec,
  out: { file: string; kind: 'svg' | 'html' },
  title: string,
): Promise<void> {
  const { renderHtml, renderSvg } = await import('../record/figures.js');
  const text = out.kind === 'svg' ? await renderSvg(spec) : await renderHtml(spec, title);
  writeTextFile(out.file, text);
}

async function runFigureTo(
  a: LoadedRecording,
  al: RunAlignment | undefined,
  fa: FigureArgs,
  out: { file: string; kind: 'svg' | 'html' },
): Promise<void> {
  const { runFigure } = await import('../record/figures.js');
  const rig = recordedRig(a.info);
  const names = a.info.header.trajectories.map((x) => x.name).join(', ');
  const title = fa.title ?? `twolink run: ${names || 'no trajectory'} on ${a.info.header.rig.name}${al ? ' (A) and another run (B)' : ''}`;
  let spec: import('vega-lite').TopLevelSpec;
  try {
    spec = runFigure(a, rig, {
      title,
      smoothS: fa.smoothS,
      maxPoints: fa.maxPoints,
      ...(al ? { other: al.bOnA } : {}),
      ...(Number.isFinite(fa.from) ? { from: fa.from } : {}),
      ...(Number.isFinite(fa.to) ? { to: fa.to } : {}),
    });
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(`--from/--to: ${e.message}`);
    throw e;
  }
  await writeFigure(spec, out, title);
}

async function load(files: string[], plot: boolean): Promise<LoadedRecording[]> {
  const fields: TickField[] = [...COMPARE_FIELDS];
  if (plot) {
    const { PLOT_FIELDS } = await import('../record/figures.js');
    for (const f of PLOT_FIELDS) if (!fields.includes(f)) fields.push(f);
  }
  const out: LoadedRecording[] = [];
  for (const f of files) out.push(await loadRecording(f, fields));
  return out;
}

export async function compareCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, COMPARE_OPTIONS, 'compare');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'compare',
        'errors of a recorded run against its plan and its twin, and against another run, per joint: RMS, mean, max and where they occur',
        'compare run.ndjson|run.mcap [other.ndjson|other.mcap] [--json] [--plot out.svg|out.html] [--export csv|mcap --out FILE]',
        COMPARE_OPTIONS,
        'Examples:\n' +
          '  twolink compare reach.ndjson\n' +
          '  twolink compare reach.ndjson reach-pid.ndjson --plot reach.svg\n' +
          '  twolink compare reach.ndjson --export mcap --out reach.mcap\n\n' +
          "Run vs run compares the measured angles at the same time on the trajectory proper (track phase): each reading's\n" +
          'trajectory time is solved from the plan in the header. See docs/compare.md.',
      ),
    );
    return 0;
  }
  const files = recordings(positionals, 'compare');
  const rules: OutputRules = { force: v.force === true, inputs: files };
  const plot = v.plot !== undefined ? figureFile(v.plot, 'plot') : undefined;
  const fa = figureArgs(v);
  let exportTo: { kind: 'csv' | 'mcap'; file: string } | undefined;
  if (v.export !== undefined) {
    const kind = choiceArg(v.export, 'export', ['csv', 'mcap'] as const, 'csv');
    exportTo = { kind, file: stringArg(v.out, 'out', `the file to write, e.g. --out run.${kind}`) };
    if (plot && resolve(plot.file) === resolve(exportTo.file))
      throw new UsageError(`--plot and --out name the same file (${plot.file}): give two files`);
  } else if (v.out !== undefined) {
    throw new UsageError('--out goes with --export csv|mcap (for a figure use --plot FILE)');
  }
  // The arguments are checked; now the outputs.
  if (plot) checkFigure(plot, rules);
  if (exportTo) checkWritablePath(exportTo.file, `${exportTo.kind.toUpperCase()} export`, rules);
  return asInput(async () => {
    const [a, b] = await load(files, plot !== undefined);
    const al = b ? alignRuns(a!, b) : undefined;
    const report = compareRecordings(a!, b, al);
    const wrote: Record<string, string> = {};
    if (plot) {
      await runFigureTo(a!, al, fa, plot);
      wrote.plot = plot.file;
    }
    if (exportTo) {
      const ex = await import('../record/export.js');
      const r = exportTo.kind === 'csv' ? await ex.exportCsv(files[0]!, exportTo.file) : await ex.exportMcap(files[0]!, exportTo.file);
      wrote.export = r.file;
    }
    if (v.json) {
      process.stdout.write(`${JSON.stringify({ ...report, ...(Object.keys(wrote).length ? { wrote } : {}) })}\n`);
    } else {
      process.stdout.write(formatReport(report));
      for (const [k, f] of Object.entries(wrote))
        process.stderr.write(`wrote ${k === 'plot' ? 'the figure' : `the ${exportTo!.kind.toUpperCase()} export of A`} to ${f}\n`);
    }
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------

const PLOT_RUN_OPTIONS = {
  out: { type: 'string', arg: 'FILE', help: 'the figure: FILE.svg or FILE.html' },
  force: FORCE_OPTION,
  ...FIGURE_OPTIONS,
  ...helpOpt,
} as const satisfies OptionSpecs;

const PLOT_TRAJ_OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json)' },
  traj: {
    type: 'string',
    arg: 'NAME|FILE',
    help: 'a built-in trajectory (reach, point, circle) or a trajectory file; or describe one with --space/--from/--to',
  },
  ...TRAJECTORY_OPTIONS,
  rate: { type: 'string', arg: 'HZ', help: 'samples per second (default 200)' },
  out: { type: 'string', arg: 'FILE', help: 'the figure: FILE.svg or FILE.html' },
  force: FORCE_OPTION,
  title: { type: 'string', arg: 'TEXT', help: 'title of the figure' },
  deg: { type: 'boolean', help: 'joint angles of --from/--to/--via in degrees' },
  ...helpOpt,
} as const satisfies OptionSpecs;

function plotHelp(): string {
  return [
    'twolink plot: figures (SVG, or an HTML page that needs no network)',
    '',
    '  twolink plot traj --rig F --traj NAME|FILE --out reach.svg',
    '      a trajectory alone, as seed 002 draws it: endpoint x, y and joint angles with velocity, acceleration and',
    '      jerk; the endpoint path and the path in joint space',
    '  twolink plot run.ndjson|run.mcap [other.ndjson|other.mcap] --out run.svg',
    '      a recorded run (what twolink compare --plot draws): desired, measured and twin angle, velocity,',
    '      acceleration and jerk per joint and for the endpoint; the endpoint path; the twin residual with the',
    '      alarm threshold; the torques',
    '',
    'twolink plot traj --help and twolink plot run --help for the options.',
    '',
  ].join('\n');
}

/** Most samples of a trajectory figure (vega renders each point of every panel). */
const MAX_FIGURE_SAMPLES = 200_000;

async function plotTraj(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, PLOT_TRAJ_OPTIONS, 'plot traj');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'plot traj',
        "a trajectory's figure (seed 002): endpoint x, y and joint angles with their velocity, acceleration and jerk, the endpoint path and the joint-space path",
        'plot traj --rig F (--traj NAME|FILE | --space joint|endpoint --from .. --to .. --duration S) --out FILE.svg|FILE.html',
        PLOT_TRAJ_OPTIONS,
        'Example: twolink plot traj --rig rigs/mock-arm.json --traj reach --out reach.svg',
      ),
    );
    return 0;
  }
  if (positionals.length) throw new UsageError(`plot traj: unexpected argument "${positionals[0]}" (give the trajectory with --traj)`);
  const inputs = [v.rig, v.traj].filter((f): f is string => typeof f === 'string');
  const out = figureFile(v.out, 'out');
  const rate = numberArg(v.rate, 'rate', { default: 200, min: 1, max: 10_000, unit: 'Hz' });
  const rig = loadRig(stringArg(v.rig, 'rig', 'a rig file, e.g. --rig rigs/mock-arm.json'));
  const spec = typeof v.traj === 'string' ? namedPath(rig, v.traj) : pathSpecFromArgs(rig, v);
  checkFigure(out, { force: v.force === true, inputs });
  const traj = buildPath(rig.arm, spec.start, spec.steps, spec.description);
  if (traj.duration * rate > MAX_FIGURE_SAMPLES) {
    throw new UsageError(
      `plot traj: ${traj.duration} s at --rate ${rate} Hz is ${Math.round(traj.duration * rate)} samples: at most ${MAX_FIGURE_SAMPLES} in a figure (a lower --rate)`,
    );
  }
  const title = typeof v.title === 'string' ? v.title : `${spec.name} on ${rig.name}`;
  const { trajectoryFigure } = await import('../record/trajectory-figure.js');
  await writeFigure(trajectoryFigure(traj, rig.arm, { title, rateHz: rate }), out, title);
  process.stderr.write(`wrote the figure of ${spec.name} (${traj.duration.toFixed(3)} s) to ${out.file}\n`);
  return 0;
}

async function plotRun(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, PLOT_RUN_OPTIONS, 'plot run');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'plot run',
        "a recorded run's figure (the same as twolink compare --plot): with a second recording, its measured angles too",
        'plot [run] run.ndjson|run.mcap [other.ndjson|other.mcap] --out FILE.svg|FILE.html [--smooth S] [--from S] [--to S]',
        PLOT_RUN_OPTIONS,
        'Example: twolink plot reach.ndjson --out reach-run.svg',
      ),
    );
    return 0;
  }
  const files = recordings(positionals, 'plot run');
  const out = figureFile(v.out, 'out');
  const fa = figureArgs(v);
  checkFigure(out, { force: v.force === true, inputs: files });
  return asInput(async () => {
    const [a, b] = await load(files, true);
    await runFigureTo(a!, b ? alignRuns(a!, b) : undefined, fa, out);
    process.stderr.write(`wrote the figure of ${files.join(' and ')} to ${out.file}\n`);
    return 0;
  });
}

export async function plotCommand(argv: readonly string[]): Promise<number> {
  const sub = argv[0];
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(plotHelp());
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'traj') return plotTraj(argv.slice(1));
  if (sub === 'run') return plotRun(argv.slice(1));
  if (sub.endsWith('.ndjson') || sub.endsWith('.mcap')) return plotRun(argv);
  throw new UsageError(`plot: "${sub}" is neither "traj", "run" nor a recording (.ndjson or .mcap); see twolink plot --help`);
}
