/**
 * Hardware-in-the-loop suites (`twolink hil SUITE.json`): a JSON file of scenarios, each a run of the
 * mock rig with its rig file, trajectories, optional controller, injections (src/mock/injections.ts) and
 * miswiring, and what the run must show. Validated with zod; every error names the suite file, the scenario (index and name) and
 * the field. Paths in a suite are relative to the suite file's folder.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { z } from 'zod';
import { loadRig, parseJsonText, readConfigText, type Rig } from '../config/load.js';
import { describeIssues, fieldPath, RigFileError } from '../config/rig.js';
import type { FeedforwardMode } from '../control/controller.js';
import { STOP_PATHS } from '../control/stop.js';
import { looksLikeStopPath } from './expect.js';
import { FeasibilityError, preflight } from '../control/feasibility.js';
import { parseInjection, type Injection } from '../mock/injections.js';
import { loadTrajectoryFile } from '../config/trajectory-file.js';
import { builtinNames, builtinPath, type PathSpec } from '../model/builtins.js';
import { parseWiring, type MockWiring } from '../mock/wiring.js';

const positive = z.number().positive().refine(Number.isFinite, 'must be finite');
/** A positive number no larger than `max` (a limit that can never bind, 1e308, is no limit: refused, with the bound and why). */
const upTo = (max: number, unit: string, why: string): z.ZodType<number> =>
  positive.refine((v) => v <= max, `must be at most ${max} ${unit} (${why})`);
/** An angle limit [deg]: a tracking or twin error beyond a full turn says nothing. */
const degLimit = upTo(360, 'deg', 'a full turn');
/** A limit for every joint (one number) or per joint (an array). */
const perJoint = z.union([degLimit, z.array(degLimit).min(1).max(2)]);
/** A count of twin alarms. */
const alarms = z.number().int().nonnegative().max(1_000_000);

const expectSchema = z.strictObject({
  /**
   * How the run must stop: a kind path (`done`, `timeout`, `estop`, `fault` for any fault,
   * `fault.link-lost` for one kind; control/stop.ts STOP_PATHS), or (the old form, an alias) the
   * start of the stop's text (`fault:link-lost`). @default "done"
   */
  stopReason: z
    .string()
    .min(1)
    .default('done')
    .refine((v) => !looksLikeStopPath(v) || STOP_PATHS.includes(v), {
      error: (i) =>
        `"${String(i.input)}" is no stop kind: give one of ${STOP_PATHS.join(', ')} (or, the old form, the start of the stop's text with its colon: "fault:link-lost")`,
    }),
  /** Largest tracking RMS error on the trajectory proper [deg]. */
  maxRmsDeg: perJoint.optional(),
  /** Largest tracking error on the trajectory proper [deg]. */
  maxErrorDeg: perJoint.optional(),
  /** Twin alarms: exactly this many, or within { min, max }. */
  twinAlarms: z
    .union([
      alarms,
      z
        .strictObject({ min: alarms.optional(), max: alarms.optional() })
        .refine((r) => r.min !== undefined || r.max !== undefined, 'give min, max or both'),
    ])
    .optional(),
  /** Largest RMS of the twin's residual [deg]. */
  maxTwinRmsDeg: perJoint.optional(),
  /** The loop must have left tracking within this long after the first injection [ms]. */
  stopWithinMs: upTo(60_000, 'ms', 'a stop that takes a minute is no stop').optional(),
});

const scenarioSchema = z
  .strictObject({
    name: z.string().min(1),
    /** Rig file with a plant section. */
    rig: z.string().min(1),
    /** A built-in trajectory name or a trajectory file, or several in order. */
    traj: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** Loop rate [Hz]. @default the rig file's */
    rateHz: z.number().int().min(100).max(1000).optional(),
    /** twolink's own law's feedforward (not with a controller, which replaces that law). @default the rig file's */
    feedforward: z.enum(['desired', 'measured', 'none']).optional(),
    /** A controller module (ESM) in place of twolink's feedforward + PID. */
    controller: z.string().min(1).optional(),
    /** Test knobs injected into the mock rig, as for --inject: "payload=0.25@2.2". */
    injections: z.array(z.string().min(1)).optional(),
    /** @deprecated The old name of `injections` (accepted with a notice; not with `injections`). */
    faults: z.array(z.string().min(1)).optional(),
    /** A miswired mock, as for --wiring: "reverse-encoder=1". */
    wiring: z.string().min(1).optional(),
    /** Longest the scenario may run [s]. @default 120 */
    maxSeconds: upTo(3600, 's', 'an hour; a soak is several scenarios').optional(),
    expect: expectSchema,
  })
  .refine((s) => s.controller === undefined || s.feedforward === undefined, {
    path: ['feedforward'],
    error: 'goes with twolink\'s own law; "controller" replaces that law: give one of "controller" and "feedforward"',
  });

export const suiteSchema = z.strictObject({
  /** Name of the suite in the report and the JUnit XML. @default the file's name */
  name: z.string().min(1).optional(),
  scenarios: z.array(scenarioSchema).min(1),
});

export type Expectations = z.infer<typeof expectSchema>;

/** A scenario with its files read and checked. */
export interface Scenario {
  /** Position in the suite, from 0. */
  index: number;
  name: string;
  rig: Rig;
  /** The trajectories, in order. */
  paths: PathSpec[];
  /** [Hz] */
  rateHz: number;
  feedforward: FeedforwardMode;
  /** Path of the controller module, resolved against the suite's folder (relative to the cwd). */
  controller?: string;
  injections: Injection[];
  /** The miswired mock (`wiring.spec` is the text as written). */
  wiring?: MockWiring;
  /** [s] */
  maxSeconds: number;
  expect: Expectations;
}

export interface Suite {
  file: string;
  name: string;
  scenarios: Scenario[];
  /** What the suite should change, one line each (a deprecated key), naming the file and the field. */
  notices: string[];
}

/** Reads and checks a suite file; throws RigFileError (exit code 2) naming the file, scenario and field. */
export function loadSuite(file: string): Suite {
  // Bounded, and never a FIFO or a device (config/files.ts): a RigFileError naming the file.
  return parseSuite(parseJsonText(readConfigText(file, 'suite file'), file), file);
}

/** Checks a parsed suite (`file` names it in errors; paths in it are relative to its folder). */
export function parseSuite(raw: unknown, file: string): Suite {
  const r = suiteSchema.safeParse(raw);
  if (!r.success) {
    const { field, problems } = describeIssues(r.error.issues, raw);
    const named = problems.map((p) => `${nameScenario(p.path, raw)}: ${p.text}`);
    throw new RigFileError(file, named.join(`\n${file}: `), field);
  }
  const names = new Set<string>();
  const notices: string[] = [];
  const scenarios = r.data.scenarios.map((s, i) => {
    const where = `scenarios[${i}] ("${s.name}")`;
    if (names.has(s.name))
      throw new RigFileError(file, `${where}.name: another scenario has this name (names identify test cases)`, `scenarios[${i}].name`);
    names.add(s.name);
    if (s.faults !== undefined) {
      if (s.injections !== undefined)
        throw new RigFileError(file, `${where}.faults: the old name of "injections": give only "injections"`, `scenarios[${i}].faults`);
      notices.push(
        `${file}: ${where}.faults is deprecated: rename it to "injections" (same values; "fault" now means only a safety stop the loop declares)`,
      );
    }
    return resolveScenario(s, i, file, where);
  });
  return { file, name: r.data.name ?? file.replace(/^.*\//, '').replace(/\.json$/, ''), scenarios, notices };
}

/** A problem's field as people read it, with the scenario's name after `scenarios[i]` when the field is in one. */
function nameScenario(path: readonly PropertyKey[], raw: unknown): string {
  const [top, i, ...rest] = path;
  if (top !== 'scenarios' || typeof i !== 'number') return fieldPath(path);
  const s = (raw as { scenarios?: { name?: unknown }[] }).scenarios?.[i];
  const inside = rest.length === 0 ? '' : typeof rest[0] === 'number' ? fieldPath(rest) : `.${fieldPath(rest)}`;
  return `scenarios[${i}]${typeof s?.name === 'string' ? ` ("${s.name}")` : ''}${inside}`;
}

/** A scenario's expectations against its arm and injections: one limit per joint, min <= max, stopWithinMs only with an injection. */
function checkExpect(
  e: z.infer<typeof scenarioSchema>['expect'],
  joints: number,
  injections: number,
  fail: (field: string, detail: string) => never,
): void {
  for (const key of ['maxRmsDeg', 'maxErrorDeg', 'maxTwinRmsDeg'] as const) {
    const v = e[key];
    if (Array.isArray(v) && v.length !== joints)
      fail(`expect.${key}`, `${v.length} limits for a ${joints}-joint arm (give one number for every joint, or one per joint)`);
  }
  if (
    typeof e.twinAlarms === 'object' &&
    e.twinAlarms.min !== undefined &&
    e.twinAlarms.max !== undefined &&
    e.twinAlarms.min > e.twinAlarms.max
  ) {
    fail('expect.twinAlarms', `min ${e.twinAlarms.min} is above max ${e.twinAlarms.max}`);
  }
  if (e.stopWithinMs !== undefined && injections === 0)
    fail('expect.stopWithinMs', 'is measured from the first injection: give "injections"');
}

function resolveScenario(s: z.infer<typeof scenarioSchema>, index: number, file: string, where: string): Scenario {
  const base = dirname(file);
  const local = (p: string): string => (isAbsolute(p) ? p : relative(process.cwd(), join(base, p)) || '.');
  const fail = (field: string, detail: string): never => {
    throw new RigFileError(file, `${where}.${field}: ${detail}`, `scenarios[${index}].${field}`);
  };
  const rig = nested(
    () => loadRig(local(s.rig)),
    (m) => fail('rig', m),
  );
  if (!rig.plant)
    fail('rig', `${local(s.rig)} has no "plant" section: HIL scenarios run on the mock rig (use rigs/mock-arm.json or a copy)`);
  const paths = scenarioPaths(s, rig, local, fail);
  const maxSeconds = s.maxSeconds ?? 120;
  const injections = scenarioInjections(s, rig.joints, maxSeconds, fail);
  const wiring =
    s.wiring === undefined
      ? undefined
      : nested(
          () => parseWiring(s.wiring!, rig.joints),
          (m) => fail('wiring', m),
        );
  const e = s.expect;
  checkExpect(e, rig.joints, injections.length, fail);
  let controller: string | undefined;
  if (s.controller !== undefined) {
    controller = local(s.controller);
    if (!existsSync(controller) || !statSync(controller).isFile()) fail('controller', `no such file ${controller}`);
  }
  return {
    index,
    name: s.name,
    rig,
    paths,
    rateHz: s.rateHz ?? rig.control.rateHz,
    feedforward: s.feedforward ?? rig.control.feedforward,
    ...(controller !== undefined ? { controller } : {}),
    injections,
    ...(wiring !== undefined ? { wiring } : {}),
    maxSeconds,
    expect: e,
  };
}

/** Where a scenario's field is wrong: throws a RigFileError naming it. */
type Fail = (field: string, detail: string) => never;

/** The scenario's trajectories (built-in or .json files), each checked as the HIL engines run them: in turn from the mock's start pose, parked back there. */
function scenarioPaths(s: z.infer<typeof scenarioSchema>, rig: Rig, local: (p: string) => string, fail: Fail): PathSpec[] {
  const trajs = typeof s.traj === 'string' ? [s.traj] : s.traj;
  const paths = trajs.map((t, k) => {
    const field = typeof s.traj === 'string' ? 'traj' : `traj[${k}]`;
    const builtin = builtinPath(rig.arm, t);
    if (builtin) return builtin;
    if (!t.endsWith('.json'))
      fail(field, `unknown trajectory "${t}": built-ins for this arm are ${builtinNames(rig.arm).join(', ')}, or give a .json file`);
    const spec = nested(
      () => loadTrajectoryFile(local(t)),
      (m) => fail(field, m),
    );
    return spec;
  });
  try {
    preflight(rig, paths);
  } catch (e) {
    if (!(e instanceof Error) || e.name === 'TypeError' || e.name === 'ReferenceError') throw e;
    const k =
      e instanceof FeasibilityError
        ? Math.max(
            0,
            paths.findIndex((p) => p.name === e.trajectory),
          )
        : 0;
    fail(typeof s.traj === 'string' ? 'traj' : `traj[${k}]`, e.message);
  }
  return paths;
}

/** The scenario's injections ("injections", or the older "faults"), each due before its end. */
function scenarioInjections(s: z.infer<typeof scenarioSchema>, joints: number, maxSeconds: number, fail: Fail): Injection[] {
  const key = s.faults !== undefined ? 'faults' : 'injections';
  const injections = (s.injections ?? s.faults ?? []).map((text, k) =>
    nested(
      () => parseInjection(text, joints, ''),
      (m) => fail(`${key}[${k}]`, m.trimStart()),
    ),
  );
  injections.forEach((inj, k) => {
    if (inj.at >= maxSeconds)
      fail(
        `${key}[${k}]`,
        `"${s.injections?.[k] ?? s.faults?.[k]}" is due at ${inj.at} s, after the scenario's end (maxSeconds ${maxSeconds} s): it would never happen`,
      );
  });
  return injections;
}

/** Runs `f`; an input error it throws (a bad rig or trajectory file, a bad injection) goes to `fail` with its message. */
function nested<T>(f: () => T, fail: (message: string) => never): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof Error && e.name !== 'TypeError' && e.name !== 'ReferenceError') return fail(e.message);
    throw e;
  }
}
