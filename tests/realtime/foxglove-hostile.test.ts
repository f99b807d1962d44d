// Issue 32 against a real `twolink run --mock --foxglove 0 --record`: each of the four client messages
// that ended a run with a raw TypeError/RangeError now closes only that client (1008 and the reason,
// one line on stderr) and the run ends `done`, exit 0, its summary printed and its recording complete;
// a browser page of another origin (http://example.test) is refused and said; --foxglove-allow-origin
// is checked before anything moves. The fuzz of 10,000 random messages is `npm run bench -- --only
// foxglove-fuzz` (docs/foxglove.md); the property test in virtual time is tests/viz-live-hostile.test.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, lastJson, ROOT, twolink, type CliResult, whyExit } from '../helpers/cli.js';
import { FoxgloveTestClient } from '../helpers/foxglove-client.js';
import { liveEnd, spawnLiveChild, type LiveChildEnd } from '../../src/bench/live-child.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-fox-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(args: string[]): { port: Promise<number>; done: Promise<CliResult & Pick<LiveChildEnd, 'reports'>> } {
  const c = spawnLiveChild(BIN, args, ROOT);
  return { port: c.port, done: c.done };
}

/** The recording is complete: the header, every tick, the summary last with the count of ticks held. */
function expectComplete(file: string, summaryTicks: number): void {
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!) as { kind?: string; ticks?: number; stop?: unknown };
  expect(last.kind).toBe('summary');
  expect(last.stop).toEqual({ kind: 'done' });
  expect(lines.filter((l) => l.startsWith('{"kind":"tick"')).length).toBe(last.ticks);
  expect(last.ticks).toBe(summaryTicks);
}

const KILLERS: [string, (channel: (topic: string) => number) => string][] = [
  ['the JSON null', () => 'null'],
  ['subscriptions: [null]', () => JSON.stringify({ op: 'subscribe', subscriptions: [null] })],
  [
    'subscription id -1 on /robot_description',
    (ch) => JSON.stringify({ op: 'subscribe', subscriptions: [{ id: -1, channelId: ch('/robot_description') }] }),
  ],
  ['subscription id 1e12 on /tf', (ch) => JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1e12, channelId: ch('/tf') }] })],
];

describe('twolink run --foxglove against hostile clients', () => {
  it.each(KILLERS)('%s closes that client only; the run ends done, exit 0, summary and recording complete', async (name, message) => {
    const record = join(dir, `${name.replace(/\W+/g, '-')}.ndjson`);
    const run = start(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--json', '--record', record, '--foxglove', '0']);
    const port = await run.port;
    // A client that keeps to the protocol, and the one that sends the message.
    const good = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    const bad = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.websocket.v1']);
    for (const c of [good, bad]) await c.until(() => c.channels.length > 0 || c.closed !== undefined);
    good.subscribe(['/robot_description', '/tf']);
    bad.ws.send(message((topic) => bad.channels.find((c) => c.topic === topic)!.id));
    await bad.until(() => bad.closed !== undefined);
    const r = await run.done;
    expect(r.code, whyExit(r)).toBe(0);
    expect(bad.closed!.code).toBe(1008);
    expect(r.stderr).toContain(`twolink: Foxglove live view: closed a client (1008): ${bad.closed!.reason}\n`);
    // Its counts as values (its live-end record), and in words for people on stderr.
    expect(liveEnd(r)).toMatchObject({ closed: 1, refused: 0, rateClosed: 0 });
    expect(r.stderr).toMatch(
      /twolink: Foxglove live view: \d+ client messages read, 1 clients closed for a message outside the protocol, 0 connections refused/,
    );
    expect(r.stderr).not.toMatch(/TypeError|RangeError|\n\s+at /);
    const s = lastJson(r);
    expect(s.stop).toEqual({ kind: 'done' });
    expectComplete(record, s.ticks);
    // The other client was served to the end.
    expect(good.on('/robot_description').length).toBe(1);
    expect(good.on('/tf').length).toBeGreaterThan(10);
    good.ws.terminate();
  });

  it("refuses a page of another origin (http://example.test) and says so; Foxglove's web app and --foxglove-allow-origin get in", async () => {
    const run = start([
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--traj',
      'reach',
      '--json',
      '--foxglove',
      '0',
      '--foxglove-allow-origin',
      'http://localhost:5173',
    ]);
    const port = await run.port;
    const status = (origin: string): Promise<number> =>
      new Promise((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}`, ['foxglove.websocket.v1'], { origin });
        ws.on('error', () => undefined);
        ws.on('open', () => {
          ws.terminate();
          resolve(101);
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      });
    expect(await status('http://example.test')).toBe(403);
    expect(await status('https://app.foxglove.dev')).toBe(101);
    expect(await status('http://localhost:5173')).toBe(101);
    const r = await run.done;
    expect(r.code, whyExit(r)).toBe(0);
    expect(lastJson(r).stop).toEqual({ kind: 'done' });
    const said = r.stderr.split('\n').filter((l) => l.includes('example.test'));
    expect(said).toEqual([
      expect.stringMatching(
        /^twolink: Foxglove live view: refused a connection from origin "http:\/\/example\.test" \(allowed: no Origin header, https:\/\/app\.foxglove\.dev, https:\/\/studio\.foxglove\.dev, file:\/\/, http:\/\/localhost:5173; add one with --foxglove-allow-origin\)$/,
      ),
    ]);
  });

  it('checks --foxglove-allow-origin before anything moves (exit 2, the value and what is wrong named)', async () => {
    for (const [value, why] of [
      ['http://example.test/page', 'no path'],
      ['null', 'sandboxed frames'],
      ['example.test', 'not a URL origin'],
    ] as const) {
      const r = await twolink([
        'run',
        '--rig',
        'rigs/mock-arm.json',
        '--mock',
        '--traj',
        'reach',
        '--json',
        '--foxglove',
        '0',
        '--foxglove-allow-origin',
        value,
      ]);
      expect(r.code, value).toBe(2);
      expect(r.stderr).toContain(`--foxglove-allow-origin ${JSON.stringify(value)}: `);
      expect(r.stderr).toContain(why);
      expect(r.stdout).toBe('');
    }
    const alone = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--foxglove-allow-origin', 'http://localhost:1']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--foxglove-allow-origin goes with --foxglove');
  });
});
