/**
 * Exports of a recording for the tools roboticists already use: CSV (spreadsheets, pandas,
 * PlotJuggler) and MCAP (Foxglove). Both stream: the recording is read line by line and written as
 * it goes, so a long run is never held in memory.
 */
import { checkWritablePath } from '../config/files.js';
import { F, TICK_TABLE, TICK_WIDTH, type TickField, type TickFieldSpec } from '../telemetry/tick.js';
import { FileSink } from './file-sink.js';
import { McapRunWriter } from './mcap.js';
import { readRecording, recordedRig, type RecordingInfo } from './read.js';

export { MCAP_TOPICS, tickJsonSchema } from './mcap.js';

/** An export never writes over the recording it reads (a FileError), whatever the caller checked. */
function notOverInput(recording: string, out: string, what: string): void {
  checkWritablePath(out, what, { force: true, inputs: [recording] });
}

/** One CSV column: its header name (with its unit) and how to get it from a tick row. */
interface CsvColumn {
  name: string;
  get(row: Float64Array): number | string;
}

/**
 * The CSV columns of a recording with `joints` joints. Names are plain identifiers with the unit
 * last (`des_q1_rad`), so spreadsheets, pandas and PlotJuggler take them as they are; joints are
 * numbered from 1. `state` and `phase` come as words and as codes (PlotJuggler plots numbers).
 */
export function csvColumns(joints: number): CsvColumn[] {
  const cols: CsvColumn[] = [];
  for (const spec of TICK_TABLE as readonly TickFieldSpec[]) {
    const at = F[(spec.joints ? `${spec.row}0` : spec.row) as TickField];
    const stem = `${spec.group ? `${spec.group}_` : ''}${spec.csv ?? spec.name}`;
    const unit = spec.unit ? `_${CSV_UNIT[spec.unit]}` : '';
    const codes = spec.codes;
    if (codes) {
      cols.push({ name: stem, get: (r) => codes[r[at]!] ?? '' });
      cols.push({ name: `${stem}_code`, get: (r) => r[at]! });
    } else if (spec.joints) {
      for (let j = 0; j < joints; j++) cols.push({ name: `${stem}${j + 1}${unit}`, get: (r) => r[at + j]! });
    } else cols.push({ name: `${stem}${unit}`, get: (r) => r[at]! });
  }
  return cols;
}

/** Units as they end a CSV column name (plain identifiers). */
const CSV_UNIT: Record<Exclude<TickFieldSpec['unit'], ''>, string> = {
  s: 's',
  us: 'us',
  rad: 'rad',
  'rad/s': 'rad_s',
  'rad/s^2': 'rad_s2',
  'N m': 'Nm',
  N: 'N',
};

function cell(v: number | string): string {
  if (typeof v === 'string') return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  // The shortest text that reads back as the same double; an empty cell for NaN.
  return Number.isFinite(v) ? String(v) : '';
}

/** What an export wrote. */
export interface ExportResult {
  file: string;
  ticks: number;
  bytes: number;
  info: RecordingInfo;
}

/** Writes the ticks of a recording as CSV: a header row, then one row per tick. */
export async function exportCsv(recording: string, out: string): Promise<ExportResult> {
  notOverInput(recording, out, 'CSV export');
  let sink: FileSink | undefined;
  let cols: CsvColumn[] = [];
  let ticks = 0;
  try {
    const info = await readRecording(recording, {
      header: (h) => {
        cols = csvColumns(h.joints);
        sink = new FileSink(out);
        sink.write(`${cols.map((c) => c.name).join(',')}\n`);
      },
      tick: (row) => {
        sink!.write(`${cols.map((c) => cell(c.get(row))).join(',')}\n`);
        ticks++;
      },
    });
    sink!.close();
    return { file: out, ticks, bytes: sink!.bytes, info };
  } catch (e) {
    sink?.abandon();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// MCAP

/**
 * Writes a recording as MCAP (record/mcap.ts, McapRunWriter: the Foxglove scene with the URDF first,
 * one JSON message per tick on /twolink/tick at its log time (the run's start plus the tick's loop
 * time), events on /twolink/event, the header and summary as metadata). Indexed and chunked
 * (uncompressed), so Foxglove can seek in it. `twolink run --record F.mcap` writes the same file
 * while the arm runs (McapRecorder).
 */
export async function exportMcap(recording: string, out: string): Promise<ExportResult> {
  notOverInput(recording, out, 'MCAP export');
  let w: McapRunWriter | undefined;
  const row = new Float64Array(TICK_WIDTH);
  try {
    const info = await readRecording(recording, {
      header: async (h) => {
        w = await McapRunWriter.open(out, recordedRig({ file: recording, header: h }), h);
      },
      tick: async (r) => {
        row.set(r);
        await w!.tick(row);
      },
      event: async (e) => {
        await w!.event(e.data, e.t);
      },
    });
    const cut =
      info.truncated &&
      (info.format === 'mcap'
        ? `the MCAP was cut short: read to its last whole chunk (${info.truncated.bytes} bytes after it left out)`
        : `line ${info.truncated.line} was cut short and left out`);
    const extra: Record<string, Record<string, unknown>> = cut ? { 'twolink.recording': { truncated: cut } } : {};
    await w!.end(info.summary, extra);
    return { file: out, ticks: w!.ticks, bytes: w!.bytes, info };
  } catch (e) {
    w?.abandon();
    throw e;
  }
}
