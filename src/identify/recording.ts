/**
 * A run's recording as the fit's ticks, read with src/record/read.ts (streamed and validated line by
 * line; errors name the file and the line).
 */
import { readRecording as readNdjson, RecordingError, type RecordingInfo } from '../record/read.js';
import { fitTickFromRow, type FitTick } from './fit.js';

export { RecordingError };

export interface Recording {
  info: RecordingInfo;
  ticks: FitTick[];
}

/** Reads a two-link recording's ticks. Throws a RecordingError for a bad file or a one-link run. */
export async function readRecording(file: string): Promise<Recording> {
  const ticks: FitTick[] = [];
  const info = await readNdjson(file, {
    header: (h) => {
      if (h.joints !== 2) throw new RecordingError(file, `a ${h.joints}-joint recording: identification needs a two-link arm`, 1);
    },
    tick: (row) => void ticks.push(fitTickFromRow(row)),
  });
  return { info, ticks };
}
