// One recording header (issue 22): built in one place (run/header.ts), its schema written once
// (telemetry/header.ts), which the recorder checks before writing and record/read.ts reads with.
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { readRecording } from '../src/record/read.js';
import { runHeader } from '../src/run/header.js';
import { virtualRun } from '../src/run/virtual.js';
import { recordingHeaderSchema } from '../src/telemetry/header.js';
import { Recorder } from '../src/telemetry/recorder.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-header-'));
const rig = loadRig('rigs/mock-arm.json');
const reach = builtinPath(rig.arm, 'reach')!;

describe('the recording header', () => {
  it('the header a run builds is the one the reader takes', () => {
    const h = runHeader({
      rig,
      rateHz: 500,
      feedforward: 'desired',
      target: { kind: 'port', path: '/dev/ttyACM0' },
      paths: [reach],
      injections: [{ name: 'silent', at: 1 }],
    });
    const back = recordingHeaderSchema.parse(JSON.parse(JSON.stringify(h)));
    expect(back).toMatchObject({
      kind: 'header',
      joints: 2,
      rateHz: 500,
      feedforward: 'desired',
      target: { kind: 'port', path: '/dev/ttyACM0' },
      rig: { file: rig.file, name: rig.name },
    });
    expect(back.trajectories.map((t) => t.name)).toEqual(['reach']);
    expect(back.clock).toBeUndefined();
  });

  it('a header the reader would refuse is refused before the file is made, naming the field', () => {
    const file = join(dir, 'bad.ndjson');
    const r = new Recorder(file, 2);
    expect(() =>
      r.open({
        ...runHeader({ rig, rateHz: 500, feedforward: 'desired', target: { kind: 'mock' }, paths: [], injections: [] }),
        rateHz: -1,
      }),
    ).toThrow(`recording ${file}: its header would not read back: rateHz`);
    expect(existsSync(file)).toBe(false);
  });

  it('a virtual run records it and record/read.ts reads it back: virtual time, the mock, the trajectories', async () => {
    const file = join(dir, 'virtual.ndjson');
    await virtualRun(rig, [reach], { record: file, keepRows: false });
    const info = await readRecording(file);
    expect(info.header).toMatchObject({ kind: 'header', clock: 'virtual', target: { kind: 'mock' }, joints: 2, injections: [] });
    expect(info.header.trajectories.map((t) => t.name)).toEqual(['reach']);
    expect(info.ticks).toBeGreaterThan(0);
  });
});
