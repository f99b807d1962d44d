// Runs `twolink tune`'s driver on a rig file's mock in virtual time, with an operator that answers
// yes and never stops (tests of tune).
import { loadRig, parseJsonText, resolveRig, type Rig } from '../../src/config/load.js';
import { parseRigFile } from '../../src/config/rig.js';
import { readFileSync } from 'node:fs';
import { runTune, type TuneOutcome } from '../../src/tune/driver.js';
import { openTuneMock } from '../../src/tune/mock.js';

export interface TuneRun {
  rig: Rig;
  outcome: TuneOutcome;
  pose: number[];
  said: string[];
}

export async function tuneOnMock(file: string, opts: { bandwidthHz?: number; seed?: number; joints?: number[] } = {}): Promise<TuneRun> {
  let rig = loadRig(file);
  if (opts.seed !== undefined) {
    const raw = parseJsonText(readFileSync(file, 'utf8'), file) as { plant: Record<string, unknown> };
    raw.plant.seed = opts.seed;
    rig = resolveRig(parseRigFile(raw, file), file);
  }
  const m = await openTuneMock(rig);
  const said: string[] = [];
  const operator = {
    say: (s: string) => void said.push(s),
    confirm: async () => undefined,
    ask: async () => undefined,
    signal: new AbortController().signal,
  };
  let pose: number[] = [];
  try {
    const outcome = await m.drive(
      runTune({
        rig,
        link: m.link,
        operator,
        options: {
          joints: opts.joints ?? [...Array(rig.joints).keys()],
          bandwidthHz: opts.bandwidthHz ?? rig.control.rateHz / 40,
          explicit: opts.bandwidthHz !== undefined,
          rateHz: rig.control.rateHz,
        },
        onPose: (q) => (pose = q.slice()),
      }),
    );
    return { rig, outcome, pose, said };
  } finally {
    await m.close();
  }
}
