// Issue 32, a client's rate: a client that floods a real `twolink run --mock --foxglove 0 --record`
// with valid requests (getParameters, far past its budget: CLIENT_RATE in src/viz/live.ts) is closed
// with 1008 and its rate named, said once on stderr; a client that keeps to the protocol is served to
// the end; the run ends `done`, exit 0, its recording complete (the ticks in the file = the summary's).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, lastJson, ROOT, whyExit } from '../helpers/cli.js';
import { FoxgloveTestClient } from '../helpers/foxglove-client.js';
import { liveEnd, spawnLiveChild } from '../../src/bench/live-child.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-fox-flood-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('twolink run --foxglove against a flooding client', () => {
  it('closes the flooding client for its rate (said once); the run ends done, exit 0, its recording complete', async () => {
    const record = join(dir, 'flood.ndjson');
    const run = spawnLiveChild(
      BIN,
      ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--json', '--record', record, '--foxglove', '0'],
      ROOT,
    );
    const port = await run.port;
    const good = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    const flood = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    for (const c of [good, flood]) await c.until(() => c.channels.length > 0 || c.closed !== undefined);
    good.subscribe(['/robot_description', '/tf']);
    for (let k = 0; k < 5000 && flood.ws.readyState === WebSocket.OPEN; k++)
      flood.ws.send(JSON.stringify({ op: 'getParameters', parameterNames: [], id: String(k) }));
    await flood.until(() => flood.closed !== undefined);
    // The other client is still connected then, and is served after (until the run's end closes it).
    expect(good.closed).toBeUndefined();
    const tfAtFlood = good.on('/tf').length;
    const r = await run.done;
    expect(r.code, whyExit(r)).toBe(0);
    expect(flood.closed!.code).toBe(1008);
    expect(flood.closed!.reason).toMatch(/^over its message rate: more than 100 messages a second/);
    // The counts as values (the run's live-end record); the words for people on stderr, once.
    expect(liveEnd(r)).toMatchObject({ closed: 0, refused: 0, rateClosed: 1 });
    const said = r.stderr.split('\n').filter((l) => l.includes('message rate'));
    expect(said).toEqual([
      `twolink: Foxglove live view: closed a client (1008): ${flood.closed!.reason}`,
      expect.stringMatching(
        / 0 clients closed for a message outside the protocol, 0 connections refused, 1 clients closed for their message rate; handling them took [\d.]+ ms of the main thread/,
      ),
    ]);
    expect(r.stderr).not.toMatch(/TypeError|RangeError|\n\s+at /);
    const s = lastJson(r);
    expect(s.stop).toEqual({ kind: 'done' });
    const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1)!) as { kind?: string; ticks?: number };
    expect(last.kind).toBe('summary');
    expect(lines.filter((l) => l.startsWith('{"kind":"tick"')).length).toBe(last.ticks);
    expect(last.ticks).toBe(s.ticks);
    expect(good.on('/robot_description').length).toBe(1);
    expect(good.on('/tf').length).toBeGreaterThan(tfAtFlood);
    good.ws.terminate();
  });
});
