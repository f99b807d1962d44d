// twolink doctor on a pty from `twolink rig --pty`: exit 0, the adapter line says it is not a USB
// device, and the round trip is measured (real time: only that it was measured is asserted).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { twolink, whyExit } from '../helpers/cli.js';
import { startPtyRig, type PtyRig } from '../helpers/pty-rig.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

let rig: PtyRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
});

describe('twolink doctor --port on a pty', () => {
  it(
    'says the pty is not a USB device and goes on to measure the round trip',
    async () => {
      rig = await startPtyRig();
      const r = await twolink(['doctor', '--port', rig.path, '--pings', '200', '--json'], { timeoutMs: 120_000 });
      expect(r.code, whyExit(r)).toBe(0);
      const d = JSON.parse(r.stdout.trim().split('\n').pop()!);
      expect(d.adapter).toMatchObject({ kind: 'none', vid: null, pid: null });
      const a = d.checks.find((c: { name: string }) => c.name === 'adapter');
      expect(a.evidence).toMatch(/not a USB device/);
      expect(d.roundTripUs).toMatchObject({ n: 200, clock: 'real' });
      expect(d.roundTripUs.p50).toBeGreaterThan(0);
      expect(d.roundTripUs.max).toBeGreaterThanOrEqual(d.roundTripUs.p99);
      // And the human report says the same in its adapter line.
      const h = await twolink(['doctor', '--port', rig.path, '--pings', '50'], { timeoutMs: 120_000 });
      expect(h.code, h.stderr).toBe(0);
      expect(h.stdout).toMatch(/\[WARN\] adapter: .*not a USB device/);
      expect(h.stdout).toMatch(/\[(PASS|WARN)\] round trip: 50 pings \(real time\)/);
    },
    hangGuardMs(48_000),
  );

  it(
    'a board whose encoders differ from the default rig file is measured all the same (doctor only pings)',
    async () => {
      const raw = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8'));
      raw.encoders = [
        { countsPerRev: 2048, zeroDeg: -90 },
        { countsPerRev: 2048, zeroDeg: 0 },
      ];
      const file = join(mkdtempSync(join(tmpdir(), 'doctor-')), 'cpr-2048.json');
      writeFileSync(file, JSON.stringify(raw));
      rig = await startPtyRig(file);
      const r = await twolink(['doctor', '--port', rig.path, '--pings', '50', '--json'], { timeoutMs: 120_000 });
      expect(r.code, whyExit(r)).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').pop()!).roundTripUs).toMatchObject({ n: 50, clock: 'real' });
    },
    hangGuardMs(48_000),
  );
});
