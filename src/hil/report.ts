/**
 * A suite's results: the table `twolink hil` prints, and JUnit XML for CI systems (one testcase per
 * scenario; a `failure` element with the figures when an expectation fails, an `error` element when
 * the scenario could not run). The XML is built with xmlbuilder2, which escapes text and attributes
 * and replaces characters XML 1.0 cannot hold (a fault message can quote raw bytes from the board).
 */
import { hostname } from 'node:os';
import { create } from 'xmlbuilder2';
import type { RunSummary } from '../run/stats.js';
import { VERSION } from '../version.js';
import type { Figure } from './expect.js';

/** How one scenario went. */
export interface ScenarioResult {
  index: number;
  name: string;
  /** `error`: it could not run (the run threw); `fail`: it ran and an expectation does not hold. */
  status: 'pass' | 'fail' | 'error';
  figures: Figure[];
  /** Wall time the scenario took [s]. */
  seconds: number;
  /** Loop time the run covered [s] (virtual or real). */
  loopSeconds: number;
  summary?: RunSummary;
  /** Why it could not run. */
  error?: string;
}

/** The whole suite's run. */
export interface SuiteReport {
  name: string;
  file: string;
  clock: 'virtual' | 'real';
  /** ISO time the suite started. */
  startedAt: string;
  results: ScenarioResult[];
}

function figureLine(f: Figure): string {
  return `${f.pass ? 'ok  ' : 'FAIL'} ${f.key}: ${f.label} ${f.measured} (limit ${f.limit})`;
}

/** Real time: whether the loops ran with SCHED_FIFO (a starved host's figures are the machine's, not the controller's). */
function realtimeLine(results: readonly ScenarioResult[]): string {
  const ran = results.filter((x) => x.summary?.timing !== undefined);
  const granted = ran.filter((x) => x.summary!.timing!.rt).length;
  if (ran.length === 0) return 'real-time scheduling: no scenario ran';
  return granted === ran.length
    ? 'real-time scheduling (SCHED_FIFO) on'
    : granted === 0
      ? 'real-time scheduling off'
      : `real-time scheduling on in ${granted} of ${ran.length} scenarios`;
}

/** The table: one row per scenario, one line per figure under it. */
export function formatTable(r: SuiteReport): string {
  const w = Math.max(8, ...r.results.map((x) => x.name.length));
  const lines = [
    `${r.name} (${r.file}), ${r.clock} time${r.clock === 'real' ? `, ${realtimeLine(r.results)}` : ''}`,
    `${'scenario'.padEnd(w)}  result  figures (measured, limit)`,
  ];
  for (const x of r.results) {
    const head = `${x.name.padEnd(w)}  ${x.status.toUpperCase().padEnd(6)}  `;
    if (x.status === 'error') {
      lines.push(`${head}${x.error ?? ''}`);
      continue;
    }
    x.figures.forEach((f, k) => {
      const cell = `${f.pass ? '' : '! '}${f.label}: ${f.measured}  (${f.limit})`;
      lines.push(k === 0 ? `${head}${cell}` : `${' '.repeat(w + 10)}${cell}`);
    });
  }
  const failed = r.results.filter((x) => x.status !== 'pass').length;
  lines.push(`${r.results.length - failed} of ${r.results.length} scenarios passed${failed ? `; ${failed} failed` : ''}`);
  return `${lines.join('\n')}\n`;
}

/** JUnit XML (the schema Jenkins, GitLab and GitHub's test reporters read). */
export function junitXml(r: SuiteReport): string {
  const tests = r.results.length;
  const failures = r.results.filter((x) => x.status === 'fail').length;
  const errors = r.results.filter((x) => x.status === 'error').length;
  const time = r.results.reduce((s, x) => s + x.seconds, 0).toFixed(3);
  const doc = create({ version: '1.0', encoding: 'UTF-8', invalidCharReplacement: '\uFFFD' });
  const suites = doc.ele('testsuites', { name: `twolink hil ${r.name}`, tests, failures, errors, time });
  const suite = suites.ele('testsuite', {
    name: r.name,
    tests,
    failures,
    errors,
    skipped: 0,
    time,
    timestamp: r.startedAt.replace(/\.\d+Z$/, ''),
    hostname: hostname(),
  });
  const props = suite.ele('properties');
  props.ele('property', { name: 'file', value: r.file });
  props.ele('property', { name: 'clock', value: r.clock });
  props.ele('property', { name: 'twolink', value: VERSION });
  const classname = `hil.${r.name.replace(/[^A-Za-z0-9_-]+/g, '_')}`;
  for (const x of r.results) {
    const tc = suite.ele('testcase', { name: x.name, classname, time: x.seconds.toFixed(3) });
    if (x.status === 'error') {
      tc.ele('error', { message: x.error ?? 'error', type: 'ScenarioError' }).txt(x.error ?? '');
    } else if (x.status === 'fail') {
      const bad = x.figures.filter((f) => !f.pass);
      const message = bad.map((f) => `${f.key}: ${f.measured} (limit ${f.limit})`).join('; ');
      tc.ele('failure', { message, type: 'ExpectationFailed' }).txt(x.figures.map(figureLine).join('\n'));
    }
    const out = [...x.figures.map(figureLine), `loop time ${x.loopSeconds.toFixed(3)} s`];
    if (x.summary) out.push(`summary ${JSON.stringify(x.summary)}`);
    tc.ele('system-out').txt(out.join('\n'));
  }
  return doc.end({ prettyPrint: true });
}
