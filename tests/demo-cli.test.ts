// `twolink demo` has its own options and help (issue 35, "Words": `demo --help` printed run's), and with
// --foxglove it keeps going until quit, so that there is time to connect Foxglove (it ended after one pass).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseRunReport, REPORT_FD_ENV } from '../src/run/run-report.js';
import { BIN, ROOT, twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

describe('twolink demo', () => {
  it("its help lists the demo's options, not a port's, a controller's or a mode's; those are refused", async () => {
    const help = await twolink(['demo', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^twolink demo: /);
    for (const o of ['--rig', '--traj', '--headless', '--record', '--foxglove', '--max-seconds']) expect(help.stdout).toContain(`  ${o} `);
    for (const o of ['--port', '--controller', '--mode', '--stiffness', '--constrain', '--wiring'])
      expect(help.stdout).not.toContain(`  ${o} `);
    const port = await twolink(['demo', '--port', '/dev/ttyACM0']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/demo: Unknown option '--port'/);
  });

  it(
    '--headless --foxglove cycles until Ctrl-C: a client connects, the trajectory starts a second time, SIGINT ends it',
    async () => {
      // Its live view's port as a value: its `live` record on fd 3 (TWOLINK_REPORT_FD, src/run/run-report.ts).
      const env = { ...process.env, [REPORT_FD_ENV]: '3' };
      const child = spawn(process.execPath, ['--single-threaded-gc', BIN, 'demo', '--headless', '--foxglove', '0', '--traj', 'point'], {
        cwd: ROOT,
        env,
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      });
      let stderr = '';
      const urlP = new Promise<string>((resolve, reject) =>
        createInterface({ input: child.stdio[3] as Readable }).on('line', (line) => {
          try {
            const r = parseRunReport(line);
            if (r.kind === 'live') resolve(`ws://127.0.0.1:${r.port}`);
          } catch (e) {
            reject(e instanceof Error ? e : new Error(String(e)));
          }
        }),
      );
      const secondPass = new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if ((stderr.match(/point: approach/g) ?? []).length >= 2) resolve();
        });
        child.on('exit', () => reject(new Error(`demo ended before its second pass:\n${stderr}`)));
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        const at = await urlP;
        const info = await new Promise<{ op: string }>((resolve, reject) => {
          const ws = new WebSocket(at, ['foxglove.websocket.v1']);
          ws.on('message', (d: Buffer) => {
            resolve(JSON.parse(String(d)) as { op: string });
            ws.close();
          });
          ws.on('error', reject);
        });
        expect(info.op).toBe('serverInfo');
        expect(stderr).toMatch(/twolink demo: cycling through point until Ctrl-C/);
        await secondPass;
      } finally {
        child.kill('SIGINT');
      }
      const code = await exited;
      expect(stderr).toMatch(/interrupted:SIGINT/);
      expect(code).toBe(130); // interrupted by a signal: 128 + 2, as a shell reports it
    },
    hangGuardMs(90_000),
  );
});
