// Issue 32, item 3: a bug of twolink's own (an exception or a rejection nobody caught) on any thread
// stops the arm before the process ends, on every transport, and the run ends with fault:internal
// naming where, its summary and recording complete (src/run/crash.ts, docs/safety.md).
//
// The hard case is Firmata: stock Firmata has no board watchdog, so the zero must reach the port
// before twolink exits. The throw comes from the test-only hook TWOLINK_TEST_CRASH on the Firmata
// pty rig; the rig reports (--report) when its motors stop, on the machine's monotonic clock, which
// the host's throw record (its `test-crash` report on fd 3, TWOLINK_REPORT_FD) and this test's own clock
// read too. Asserted: the order of events (the motors
// running at the throw, stopped after it, before the host exited; fault:internal; the summary written
// on stdout and in the recording), never a wall-clock window: how soon the pins read 0 after the throw
// is a figure of `npm run bench -- --only crash`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMockReport, type MockReport } from '../../src/mock/mock-report.js';
import { parseRunReport, REPORT_FD_ENV, type RunReport } from '../../src/run/run-report.js';
import { BIN, lastJson, ROOT, twolink, whyExit, type CliResult } from '../helpers/cli.js';
import { own } from '../helpers/owned-children.js';

const dir = mkdtempSync(`${tmpdir()}/twolink-crash-`);
const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;

interface Rig {
  host: string;
  reports: MockReport[];
  /** Resolves with the first report that `pick` takes (looking at those so far, then each new one). */
  next(pick: (r: MockReport) => boolean): Promise<MockReport>;
  child: ChildProcess;
}

/** `twolink rig --pty --report` of `rigFile`, once it serves. */
function reportingRig(rigFile: string): Promise<Rig> {
  const child = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', rigFile, '--pty', '--report'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  own(child);
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const reports: MockReport[] = [];
  const waiting: { pick: (r: MockReport) => boolean; resolve: (r: MockReport) => void }[] = [];
  return new Promise((resolve, reject) => {
    let host: string | undefined;
    child.on('exit', (code) => reject(new Error(`twolink rig exited (${code}) before serving: ${err}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const r = parseMockReport(line);
      reports.push(r);
      for (const w of waiting.splice(0)) {
        if (w.pick(r)) w.resolve(r);
        else waiting.push(w);
      }
      if (r.kind === 'pty') host = r.host;
      if (r.kind === 'serving')
        resolve({
          host: host!,
          reports,
          child,
          next: (pick) => {
            const found = reports.find(pick);
            return found ? Promise.resolve(found) : new Promise((res) => waiting.push({ pick, resolve: res }));
          },
        });
    });
  });
}

function stopRig(rig: Rig): Promise<void> {
  return new Promise((resolve) => {
    if (rig.child.exitCode !== null || rig.child.signalCode !== null) return resolve();
    rig.child.once('exit', () => resolve());
    rig.child.kill('SIGTERM');
  });
}

type HostRun = CliResult & { exitMs: number; reports: RunReport[] };

/** `twolink run` with the test hook set; resolves with its output, its report records (fd 3) and when it exited [ms, monotonic]. */
function hostRun(args: string[], crash: string): Promise<HostRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, TWOLINK_TEST_CRASH: crash, [REPORT_FD_ENV]: '3' };
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    own(child);
    let stdout = '';
    let stderr = '';
    let exitMs = NaN;
    const reports: RunReport[] = [];
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    createInterface({ input: child.stdio[3] as Readable }).on('line', (line) => reports.push(parseRunReport(line)));
    child.on('error', reject);
    child.on('exit', () => (exitMs = monoMs()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, exitMs, reports }));
  });
}

/** The hook's throw as the run reported it (its `test-crash` record), if it came. */
function thrownReport(r: Pick<HostRun, 'reports'>): Extract<RunReport, { kind: 'test-crash' }> | undefined {
  return r.reports.find((x): x is Extract<RunReport, { kind: 'test-crash' }> => x.kind === 'test-crash');
}

/**
 * Runs `run` until the hook has thrown (its `test-crash` record), 3 times at most: on a starved machine a
 * run can end by another fault (the board's watchdog: the simulated board or the loop not scheduled
 * for 100 ms) before the hook's time comes, and then there was no crash to test.
 */
async function untilThrown(run: () => Promise<HostRun>): Promise<HostRun> {
  let r = await run();
  for (let k = 1; k < 3 && !thrownReport(r); k++) r = await run();
  expect(thrownReport(r), `the run ended before the hook threw, 3 times: ${whyExit(r)}`).toBeDefined();
  return r;
}

/** The monotonic time of the hook's throw [ms], from its `test-crash` record. */
function throwMs(r: Pick<HostRun, 'reports'>): number {
  return thrownReport(r)!.monoMs;
}

function readRecording(file: string): any[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const rigs: Rig[] = [];
afterAll(async () => {
  await Promise.all(rigs.map(stopRig));
});

describe('a crash on the Firmata pty rig (stock Firmata: no board watchdog): the PWM pins read 0 before twolink exits', () => {
  const cases = [
    { crash: 'main@1', where: /^the main thread \(dist\/run\/crash\.js:\d+\)$/, what: 'an exception on the main thread' },
    {
      crash: 'main-rejection@1',
      where: /^the main thread \(dist\/run\/crash\.js:\d+\), a promise rejection nobody caught$/,
      what: 'a rejection nobody caught on the main thread',
    },
    { crash: 'loop@1', where: /^the loop thread$/, what: 'an exception from a timer on the loop thread' },
  ];
  for (const c of cases) {
    it(`${c.what} (TWOLINK_TEST_CRASH=${c.crash}): zero written, then fault:internal, the summary and the recording complete`, async () => {
      const file = `${dir}/${c.crash.replace(/\W/g, '-')}.ndjson`;
      let rig!: Rig;
      const r = await untilThrown(async () => {
        if (rig) await stopRig(rig);
        rig = await reportingRig('rigs/mock-arm-firmata.json');
        rigs.push(rig);
        return hostRun(
          ['run', '--rig', 'rigs/mock-arm-firmata.json', '--port', rig.host, '--traj', 'reach', '--record', file, '--force', '--json'],
          c.crash,
        );
      });
      expect(r.code, whyExit(r)).toBe(1);
      const thrown = throwMs(r);
      expect(thrownReport(r)!.thread).toBe(c.crash.split('@')[0]);
      // The motors were running at the throw: the last edge before it is a start.
      const before = rig.reports.filter((x): x is Extract<MockReport, { kind: 'motors' }> => x.kind === 'motors' && x.monoMs < thrown);
      expect(before.at(-1)?.zero, JSON.stringify(rig.reports)).toBe(false);
      // They stopped after it, before the host exited, and stayed stopped: the last edge the board
      // saw is a stop, written after the throw and before the host's exit. (Not the first zero after
      // the throw: on a starved machine the loop may still be driving when the e-stop reaches it, and a
      // motor reversing passes through zero; the stop's own write is the last one.)
      // The rig's reports come through a pipe: wait (by event) until the last edge read is a stop.
      const motorEdges = (): Extract<MockReport, { kind: 'motors' }>[] =>
        rig.reports.filter((x): x is Extract<MockReport, { kind: 'motors' }> => x.kind === 'motors');
      while (!(motorEdges().at(-1)!.zero && motorEdges().at(-1)!.monoMs > thrown)) {
        const seen = rig.reports.length;
        await rig.next((x) => x.kind === 'motors' && rig.reports.indexOf(x) >= seen);
      }
      const motors = motorEdges();
      const zero = motors.at(-1)!;
      expect(zero.zero, JSON.stringify(motors.filter((x) => x.monoMs > thrown))).toBe(true);
      expect(zero.monoMs).toBeGreaterThan(thrown);
      expect(zero.monoMs).toBeLessThan(r.exitMs);
      process.stdout.write(
        `crash-stop ${c.crash}: PWM 0 ${(zero.monoMs - thrown).toFixed(1)} ms after the throw (real time; the bench's --only crash measures it)\n`,
      );
      // fault:internal naming where; the board confirmed the zero (its pins read back).
      const s = lastJson(r);
      expect(s.stop).toEqual({
        kind: 'fault',
        fault: {
          kind: 'internal',
          where: expect.stringMatching(c.where),
          message: expect.stringMatching(/^TWOLINK_TEST_CRASH: the injected (exception|rejection) \(a test\)$/),
        },
      });
      expect(s.stopReason).toMatch(/^fault:internal: an error twolink did not catch, in the (main|loop) thread/);
      expect(s.stopOutcome).toBe('acknowledged');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      // The recording: every tick to the stop, then the summary with the same stop.
      const lines = readRecording(file);
      expect(lines.at(-1).kind).toBe('summary');
      expect(lines.at(-1).stop).toEqual(s.stop);
      const ticks = lines.filter((l: { kind: string }) => l.kind === 'tick');
      expect(ticks.length).toBe(s.ticks);
      expect(ticks.at(-1).duty).toEqual([0, 0]);
      await stopRig(rig);
    });
  }
});

describe('a crash on the line protocol (the mock rig in its own thread): the zero command confirmed by the board, not left to its watchdog', () => {
  for (const crash of ['main@1', 'loop@1']) {
    it(`TWOLINK_TEST_CRASH=${crash}`, async () => {
      const file = `${dir}/line-${crash.replace(/\W/g, '-')}.ndjson`;
      const r = await untilThrown(() =>
        hostRun(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--record', file, '--force', '--json'], crash),
      );
      expect(r.code, whyExit(r)).toBe(1);
      const s = lastJson(r);
      expect(s.stop).toMatchObject({
        kind: 'fault',
        fault: { kind: 'internal', where: expect.stringMatching(crash.startsWith('main') ? /^the main thread/ : /^the loop thread$/) },
      });
      expect(s.stopOutcome).toBe('acknowledged');
      const lines = readRecording(file);
      expect(lines.at(-1).stop).toEqual(s.stop);
      // The arm was moving when it came (the reach takes longer than 1 s), and the last command is zero.
      const ticks = lines.filter((l: { kind: string }) => l.kind === 'tick');
      expect(ticks.some((t: { duty: number[] }) => t.duty.some((d) => d !== 0))).toBe(true);
      expect(ticks.at(-1).duty).toEqual([0, 0]);
    });
  }
});

it('the recorder failing (TWOLINK_TEST_CRASH=recorder@1, its tick throws from then on): fault:internal naming it, the motors zeroed, the recording closed with its summary saying so', async () => {
  const file = `${dir}/recorder.ndjson`;
  const r = await untilThrown(() =>
    hostRun(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--record', file, '--force', '--json'], 'recorder@1'),
  );
  expect(r.code, whyExit(r)).toBe(1);
  const s = lastJson(r);
  // (toMatchObject: the mock rig's thread may have starved on a busy machine, a note the stop then carries.)
  expect(s.stop).toMatchObject({
    kind: 'fault',
    fault: {
      kind: 'internal',
      where: 'the main thread (the recorder)',
      message: "TWOLINK_TEST_CRASH: the injected recorder's failure (a test)",
    },
  });
  expect(s.stopOutcome).toBe('acknowledged');
  // Said once on stderr, as it happened (the recorder is not called again).
  expect(r.stderr.match(/an error twolink did not catch, in the main thread \(the recorder\)/g)).toHaveLength(1);
  const lines = readRecording(file);
  const ticks = lines.filter((l: { kind: string }) => l.kind === 'tick');
  const summary = lines.at(-1);
  expect(summary.kind).toBe('summary');
  expect(summary.stop).toEqual(s.stop);
  // The ticks it holds are those before the failure, said in the summary; the run's own count is the summary's.
  expect(summary.recordingFailure).toBe(
    `the recorder failed (a bug in twolink: TWOLINK_TEST_CRASH: the injected recorder's failure (a test)); the recording holds the ${ticks.length} ticks before it`,
  );
  expect(ticks.length).toBeLessThan(s.ticks);
  expect(r.stderr).toContain(`recorded ${ticks.length} ticks to ${file}`);
});

it('TWOLINK_TEST_CRASH with a value that is no plan is refused before anything moves, naming the variable', async () => {
  const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--json'], {
    env: { TWOLINK_TEST_CRASH: 'dashboard@1' },
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^twolink: TWOLINK_TEST_CRASH="dashboard@1": write THREAD@SECONDS/m);
});
