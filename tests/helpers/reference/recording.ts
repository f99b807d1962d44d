// docs/reference/recording.md, generated from what writes and reads a recording: the header line's zod
// schema (src/telemetry/header.ts), the tick table (src/telemetry/tick.ts, with the CSV columns of
// src/record/export.ts) and the summary (RunSummary of src/run/stats.ts). `npm run docs:reference`
// writes it.
import { join } from 'node:path';
import { csvColumns, MCAP_TOPICS } from '../../../src/record/export.js';
import { recordingHeaderSchema } from '../../../src/telemetry/header.js';
import { TICK_GROUPS, TICK_TABLE, type TickFieldSpec } from '../../../src/telemetry/tick.js';
import { ROOT } from '../cli.js';
import { docObjects, interfaceMembers } from './jsdoc.js';
import { cell, jsonOf, schemaTables } from './rig-file.js';

const src = (...p: string[]): string => join(ROOT, 'src', ...p);

/** The tick table as a table: the NDJSON key, the unit, the row slot, the CSV columns, the meaning. */
function tickTable(out: string[]): void {
  const specs = TICK_TABLE as readonly TickFieldSpec[];
  const columns = csvColumns(2).map((c) => c.name);
  let at = 0;
  out.push(
    '| Key | Unit | Per joint | Row slot | CSV columns | In older recordings | Meaning |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const s of specs) {
    const n = s.codes || s.joints ? 2 : 1;
    const csv = columns.slice(at, at + n);
    at += n;
    const key = s.group ? `${s.group}.${s.name}` : s.name;
    const slot = s.joints ? `${s.row}0, ${s.row}1` : s.row;
    const absent =
      s.absent === undefined
        ? 'always there'
        : typeof s.absent === 'number'
          ? `absent: read as ${s.absent}`
          : `absent: read as \`${s.absent.copy}\``;
    const codes = s.codes ? `: ${s.codes.map((c) => `\`${c}\``).join(', ')}` : '';
    out.push(
      `| \`${key}\` | ${s.unit || '-'} | ${s.joints ? 'yes' : ''} | \`${slot}\` | ${csv.map((c) => `\`${c}\``).join(', ')} | ${absent} | ${cell(s.description)}${codes} |`,
    );
  }
  if (at !== columns.length) throw new Error(`the tick table gives ${at} CSV columns, csvColumns ${columns.length}`);
  out.push('');
}

/** docs/reference/recording.md. */
export function recordingReference(): string {
  const out = [
    '# The recording',
    '',
    '<!-- Generated from src/telemetry/header.ts (the header schema), src/telemetry/tick.ts (the tick table),',
    '     src/record/export.ts (the CSV columns) and src/run/stats.ts (RunSummary) by',
    '     tests/helpers/reference/recording.ts: do not edit by hand; `npm run docs:reference` rewrites it. -->',
    '',
    '`twolink run --record FILE.ndjson` writes one JSON object per line: a header line (`"kind":"header"`),',
    'then a tick line (`"kind":"tick"`) per sample of the loop with event lines (`"kind":"event"`) between them,',
    'and a summary line (`"kind":"summary"`) when the run ends. `--record FILE.mcap` writes the same as MCAP',
    `(the header and the summary as metadata, the ticks on \`${MCAP_TOPICS.tick}\` and the events on \`${MCAP_TOPICS.event}\`).`,
    '`twolink compare`, `plot` and the exports read both (src/record/read.ts); a line cut short by a crash is',
    'ignored and reported, a bad line anywhere else is an error naming the file and the line.',
    '',
    '## The header line',
    '',
    'Fields not listed are let through (a newer twolink may add some).',
    '',
  ];
  const header = jsonOf(recordingHeaderSchema);
  schemaTables({ heading: '### `header`', schema: header, doc: '', prefix: '' }, header, docObjects([src('telemetry', 'header.ts')]), out);
  out.push(
    '## Tick lines',
    '',
    'One line per sample of the loop, in the order of the tick table (src/telemetry/tick.ts). Per-joint values',
    'are arrays with one number per joint; the CSV export (`twolink compare run.ndjson --export csv --out run.csv`)',
    'numbers the joints from 1 and ends each column name with its unit. Groups:',
    '',
    ...Object.entries(TICK_GROUPS).map(([g, what]) => `- \`${g}\`: ${what}`),
    '',
  );
  tickTable(out);
  out.push(
    '## Event lines',
    '',
    '`{"kind":"event","event":"state"|"alarm"|"trajectory"|"link"|"connected",...}` between the ticks: a change of',
    "the loop's state, a twin alarm, a trajectory's phase, a link event, the connection. At most the first",
    'events of a run are kept when a recording is read back (src/record/read.ts MAX_EVENTS).',
    '',
    '## The summary line',
    '',
    "The run's figures as `twolink run --json` prints them (RunSummary, src/run/stats.ts), plus `recordingFailure`",
    'and `recordedTicks` when the recording stopped before the run did (a full disk).',
    '',
    '| Field | Type | Meaning |',
    '| --- | --- | --- |',
  );
  for (const m of interfaceMembers(src('run', 'stats.ts'), 'RunSummary')) {
    out.push(`| \`${m.key}\` | \`${cell(m.type)}\`${m.optional ? ' (optional)' : ''} | ${cell(m.doc)} |`);
  }
  return `${out.join('\n').trimEnd()}\n`;
}
