/**
 * `twolink hil SUITE.json [--junit out.xml] [--realtime]`: hardware-in-the-loop test suites against the
 * mock rig, a table of the measured figures against their limits, and JUnit XML for CI.
 */
import { checkWritablePath, FileError, writeTextFile } from '../config/files.js';
import { formatTable, junitXml, type ScenarioResult } from '../hil/report.js';
import { runSuite } from '../hil/run.js';
import { loadSuite } from '../hil/suite.js';
import { FORCE_OPTION, formatHelp, parse, UsageError, type OptionSpecs } from './args.js';

const OPTIONS = {
  junit: { type: 'string', arg: 'FILE', help: 'write JUnit XML here (one testcase per scenario)' },
  realtime: {
    type: 'boolean',
    help: 'run on the mock rig in its own process on a pty, in real time (default: in this process, in virtual time)',
  },
  rt: {
    type: 'boolean',
    help: 'with --realtime: real-time scheduling (SCHED_FIFO) for the loop and the pty rig, as twolink run and twolink rig ask: the default (root, CAP_SYS_NICE or an rtprio limit; else said, and the suite runs without)',
  },
  'no-rt': { type: 'boolean', help: 'with --realtime: do not ask for real-time scheduling, for the loop nor for the rig' },
  only: { type: 'string', arg: 'NAME', multiple: true, help: 'run only this scenario (repeat for more)' },
  force: FORCE_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

const EXAMPLE = `Example:
  twolink hil examples/hil/suite.json --junit hil.xml

A suite is JSON: { "name"?, "scenarios": [ { "name", "rig", "traj", "rateHz"?, "feedforward"?,
"controller"?, "injections"?: ["payload=0.25@2.2"] (as --inject), "wiring"?, "maxSeconds"?, "expect": { "stopReason"?
(a kind path: "done" (the default), "timeout" (cut short by maxSeconds), "estop", "fault" (any fault) or
"fault.KIND" such as "fault.link-lost", "fault.following-error"; the old form, the start of the stop's text
such as "fault:link-lost", still works), "maxRmsDeg"?, "maxErrorDeg"?, "maxTwinRmsDeg"? (a number for every
joint or one per joint), "twinAlarms"? (a count or {"min","max"}), "stopWithinMs"? (from the first
injection) } } ] }. Paths are relative to the suite file. "faults" is the old name of "injections".

Exit codes: 0 every scenario passed, 1 one or more failed, 2 bad input.`;

export async function hilCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'hil');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'hil',
        'run a suite of HIL scenarios against the mock rig; a table of figures against limits, and JUnit XML',
        'hil SUITE.json [--junit out.xml] [--realtime [--no-rt]] [--only NAME]...',
        OPTIONS,
        EXAMPLE,
      ),
    );
    return 0;
  }
  if (positionals.length !== 1)
    throw new UsageError(`hil: give one suite file (got ${positionals.length}), e.g. twolink hil examples/hil/suite.json`);
  const junit = typeof v.junit === 'string' ? v.junit : undefined;
  const suite = loadSuite(positionals[0]!);
  if (junit !== undefined) {
    const inputs = [suite.file, ...suite.scenarios.flatMap((s) => [s.rig.file, ...(s.controller !== undefined ? [s.controller] : [])])];
    try {
      checkWritablePath(junit, 'JUnit XML', { force: v.force === true, inputs });
    } catch (e) {
      throw e instanceof FileError ? new UsageError(`--junit ${e.message}`) : e;
    }
  }
  for (const n of suite.notices) process.stderr.write(`twolink hil: ${n}\n`);
  const only = v.only ?? [];
  for (const n of only) {
    if (!suite.scenarios.some((s) => s.name === n))
      throw new UsageError(`--only "${n}": no such scenario in ${suite.file}; scenarios: ${suite.scenarios.map((s) => s.name).join(', ')}`);
  }
  const realtime = v.realtime === true;
  if ((v.rt || v['no-rt']) && !realtime)
    throw new UsageError(`--${v.rt ? 'rt' : 'no-rt'} needs --realtime (virtual time has no scheduling to ask for)`);
  const engines = await import('../hil/engines.js');
  let done = 0;
  const progress = (r: ScenarioResult, of: number): void => {
    done++;
    process.stderr.write(
      `[${done}/${of}] ${r.name}: ${r.status}${r.status === 'error' ? ` (${r.error})` : ''} in ${r.seconds.toFixed(1)} s\n`,
    );
  };
  const report = await runSuite(suite, realtime ? engines.realtimeEngine({ rt: v['no-rt'] !== true }) : engines.virtualEngine, {
    clock: realtime ? 'real' : 'virtual',
    only,
    onResult: progress,
  });
  process.stdout.write(formatTable(report));
  if (junit !== undefined) {
    try {
      writeTextFile(junit, junitXml(report));
    } catch (e) {
      throw e instanceof FileError ? new UsageError(`--junit ${e.message}`) : e;
    }
    process.stderr.write(`JUnit XML: ${junit}\n`);
  }
  return report.results.every((r) => r.status === 'pass') ? 0 : 1;
}
