/**
 * The live view against random clients (issue 32): `twolink run --mock --cycle --foxglove 0 --record`
 * in real time while up to CONCURRENT clients send random Foxglove client messages (nearly right ones:
 * subscriptions with ids at and past a uint32's edges, valid requests for what the server does not
 * offer; and wrong ones: any JSON, any text, the four messages of the issue, any bytes, pings) until
 * the run has read at least `messages` of them, reconnecting as the server closes them; then the run
 * goes on to its end. What must hold: the run ends `done`, exit 0, no stack trace, its recording
 * complete (every tick, then the summary). The figures are the run's own count of client messages
 * read (its last stderr line), the clients it closed and the connections it refused.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { mulberry32 } from '../model/random.js';
import { CLIENT_RATE } from '../viz/live.js';
import { parseClientBinary, parseClientText } from '../viz/live-protocol.js';
import { TokenBucket } from '../viz/token-bucket.js';
import { load1, section, type BenchResult } from './report.js';
import { liveEnd, spawnLiveChild } from './live-child.js';

const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));
/** Clients connected at once (under the server's cap of 8). */
const CONCURRENT = 4;
/**
 * Each fuzz client's pace [messages a second, at most 100 at once]: under the server's budget
 * (CLIENT_RATE, 100 a second) so that the fuzz tests the parser, not the rate limit; 4 clients send
 * 240 a second. Before the rate limit they sent as fast as their socket took them, and the clients'
 * process took most of a core (docs/foxglove.md, *A client's rate*).
 */
const CLIENT_PACE = { burst: 100, perSecond: 60 } as const;
/** Messages the one flooding client sends at once at the start (valid requests, far past CLIENT_RATE's burst): it must be closed for its rate. */
const FLOOD_MESSAGES = 3000;

/** One random client message: text, binary, or a ping. */
export type FuzzMessage = { text: string } | { binary: Uint8Array } | { ping: Uint8Array };

/** A random client message from `r` (uniform in [0, 1)); about one in thirteen is outside the protocol (its client is closed; 7.5 % of 100,000 with seed 1). */
export function randomClientMessage(r: () => number): FuzzMessage {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const id = (): unknown => (r() < 0.97 ? Math.floor(r() * 13) : pick([-1, 1e12, 2 ** 32, 2 ** 32 - 1, -0, 0.5, 1e300, null, '1']));
  const channel = (): unknown => (r() < 0.95 ? 1 + Math.floor(r() * 8) : pick([0, 9, 99, -1, 2 ** 32]));
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
  const u = r();
  if (u < 0.35)
    return {
      text: JSON.stringify({
        op: 'subscribe',
        subscriptions: Array.from({ length: Math.floor(r() * 4) }, () => ({ id: id(), channelId: channel() })),
      }),
    };
  if (u < 0.55) return { text: JSON.stringify({ op: 'unsubscribe', subscriptionIds: Array.from({ length: Math.floor(r() * 4) }, id) }) };
  if (u < 0.75)
    return {
      text: JSON.stringify(
        pick([
          { op: 'getParameters', parameterNames: [], id: String(Math.floor(r() * 1e6)) },
          { op: 'setParameters', parameters: [{ name: '/p', value: r() }] },
          { op: 'advertise', channels: [{ id: 1, topic: '/x', encoding: 'json', schemaName: 'X' }] },
          { op: 'unadvertise', channelIds: [1] },
          { op: 'subscribeParameterUpdates', parameterNames: ['/p'] },
          { op: 'unsubscribeParameterUpdates', parameterNames: [] },
          { op: 'subscribeConnectionGraph' },
          { op: 'unsubscribeConnectionGraph' },
          { op: 'fetchAsset', uri: 'package://x', requestId: Math.floor(r() * 2 ** 32) },
        ]),
      ),
    };
  if (u < 0.84) return { ping: bytes(Math.floor(r() * 126)) };
  if (u < 0.9) return { binary: Uint8Array.from([1, ...bytes(4 + Math.floor(r() * 20))]) };
  if (u < 0.96) {
    // A service call request, its encoding's length right (or, now and then, past the end).
    const encoding = Buffer.from(pick(['json', 'cdr', 'ros1', '']));
    const n = r() < 0.9 ? encoding.length : 1000;
    return { binary: Uint8Array.from([2, ...bytes(8), n & 0xff, (n >> 8) & 0xff, 0, 0, ...encoding, ...bytes(Math.floor(r() * 10))]) };
  }
  // Outside the protocol: each closes its client.
  return pick<() => FuzzMessage>([
    () => ({ text: 'null' }),
    () => ({ text: JSON.stringify({ op: 'subscribe', subscriptions: [null] }) }),
    () => ({ text: JSON.stringify({ op: 'subscribe', subscriptions: [{ id: -1, channelId: 1 }] }) }),
    () => ({ text: JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1e12, channelId: 2 }] }) }),
    () => ({ text: JSON.stringify({ op: pick(['nope', '', 'serverInfo', 'status']) }) }),
    () => ({ text: String.fromCharCode(...Array.from({ length: Math.floor(r() * 30) }, () => 32 + Math.floor(r() * 95))) }),
    () => ({ text: JSON.stringify([r(), { op: 'subscribe' }]) }),
    () => ({ binary: bytes(Math.floor(r() * 5)) }),
    () => ({ binary: Uint8Array.from([3 + Math.floor(r() * 250), ...bytes(8)]) }),
  ])();
}

export interface FoxgloveFuzzFigures {
  /** Client messages the run read (its own count). */
  read: number;
  /** Messages the clients sent (those sent after their client was closed are never read). */
  sent: number;
  connections: number;
  /** Clients the run closed for a message outside the protocol (its own count). */
  closed: number;
  refused: number;
  /** Clients the run closed for their message rate (the flooding client must be one). */
  rateClosed: number;
  /** The run's main-thread time handling client messages [ms] (its own count, wall time). */
  handlingMs: number;
  /** The run's main-thread CPU per client message [us], sampled (every 16th). */
  cpuUsPerMessage: number;
  /** CPU time of this process (the clients) during the run [s]. */
  clientsCpuS: number;
  statusReplies: number;
  exitCode: number | null;
  stop: string;
  ticksInFile: number;
  ticksInSummary: number;
  stackTrace: boolean;
  wallS: number;
  /** The run's stderr (for the report when it failed). */
  stderr: string;
}

/** The client counts a fuzz run shares across its concurrent clients. */
interface ClientCounts {
  sent: number;
  connections: number;
  statusReplies: number;
}

/** One client connection: random messages at CLIENT_PACE until the server closes it, it sends a message outside the protocol, or `messages` (+2%) are sent in all. */
function fuzzClient(p: number, r: () => number, f: ClientCounts, messages: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${p}`, ['foxglove.sdk.v1']);
    let opened = false;
    ws.on('error', () => undefined);
    // A connection that did not open (refused for the connection rate, or the run has ended): try again a little later, never in a spin.
    ws.on('close', () => (opened ? resolve() : void setTimeout(resolve, 100)));
    ws.on('unexpected-response', () => void setTimeout(resolve, 100));
    ws.on('message', (d: Buffer, binary: boolean) => {
      if (!binary && d.includes('"status"')) f.statusReplies++;
    });
    const send = async (): Promise<void> => {
      opened = true;
      const pace = new TokenBucket(CLIENT_PACE.burst, CLIENT_PACE.perSecond, performance.now());
      while (ws.readyState === ws.OPEN && f.sent < messages * 1.02) {
        while (!pace.take(1, performance.now())) await new Promise((res) => setTimeout(res, 1000 / CLIENT_PACE.perSecond));
        if (ws.readyState !== ws.OPEN) break;
        const m = randomClientMessage(r);
        if ('text' in m) ws.send(m.text);
        else if ('binary' in m) ws.send(m.binary);
        else ws.ping(m.ping);
        f.sent++;
        // After a message outside the protocol the server reads nothing more from this client: it waits to be closed.
        const outside = 'text' in m ? !parseClientText(m.text).ok : 'binary' in m ? !parseClientBinary(m.binary).ok : false;
        if (outside) return;
      }
      ws.close();
    };
    ws.on('open', () => void send().catch(reject));
  });
}

/** One run with `messages` or more random client messages read; `seconds` of loop time (--cycle). */
export async function fuzzFoxgloveRun(messages: number, seconds: number, seed = 32): Promise<FoxgloveFuzzFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-fuzz-fox-'));
  const record = join(dir, 'run.ndjson');
  const t0 = Date.now();
  const child = spawnLiveChild(
    BIN,
    [
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--traj',
      'reach',
      '--cycle',
      '--max-seconds',
      String(seconds),
      '--json',
      '--record',
      record,
      '--foxglove',
      '0',
    ],
    fileURLToPath(new URL('../..', import.meta.url)),
  );
  let ended = false;
  void child.done.then(() => (ended = true));
  const r = mulberry32(seed);
  const f = { sent: 0, connections: 0, statusReplies: 0 };
  const cpu0 = process.cpuUsage();
  const p = await child.port;
  const flooded = floodOnce(p);
  // Each client sends until the server closes it (a message outside the protocol) or the run ends.
  const clientLoop = async (): Promise<void> => {
    while (!ended && f.sent < messages * 1.02) {
      if (f.connections > 0 && child.exited()) break;
      f.connections++;
      await fuzzClient(p, r, f, messages);
    }
  };
  await Promise.all([...Array.from({ length: CONCURRENT }, clientLoop), flooded]);
  const end = await child.done;
  const { code: exitCode, stdout, stderr } = end;
  const cpu = process.cpuUsage(cpu0);
  const summary = lastJsonLine(stdout);
  const held = ticksHeld(record);
  rmSync(dir, { recursive: true, force: true });
  // The run's own counts, as values (its `live-end` record on fd 3; none: no client talked to it).
  const counts = liveEnd(end);
  return {
    read: counts?.requests ?? 0,
    sent: f.sent,
    connections: f.connections,
    closed: counts?.closed ?? 0,
    refused: counts?.refused ?? 0,
    rateClosed: counts?.rateClosed ?? 0,
    handlingMs: counts?.handlingMs ?? 0,
    cpuUsPerMessage: counts?.cpuUsPerMessage ?? Number.NaN,
    clientsCpuS: (cpu.user + cpu.system) / 1e6,
    statusReplies: f.statusReplies,
    exitCode,
    stop: JSON.stringify(summary?.stop ?? null),
    ...held,
    stackTrace: /\n\s+at .+:\d+:\d+/.test(stderr),
    wallS: (Date.now() - t0) / 1000,
    stderr,
  };
}

/** The ticks an NDJSON recording holds, and the count its last line (the summary) says (-1: no summary). */
function ticksHeld(record: string): { ticksInFile: number; ticksInSummary: number } {
  const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!) as { kind?: string; ticks?: number };
  return {
    ticksInFile: lines.filter((l) => l.startsWith('{"kind":"tick"')).length,
    ticksInSummary: last.kind === 'summary' ? (last.ticks ?? -1) : -1,
  };
}

/** One client that sends FLOOD_MESSAGES valid requests at once (each within the protocol), and ends when the run closes it. */
function floodOnce(port: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    ws.on('error', () => resolve());
    ws.on('close', () => resolve());
    ws.on('unexpected-response', () => resolve());
    ws.on('open', () => {
      for (let k = 0; k < FLOOD_MESSAGES && ws.readyState === ws.OPEN; k++)
        ws.send(JSON.stringify({ op: 'getParameters', parameterNames: [], id: `flood ${k}` }));
    });
  });
}

function lastJsonLine(stdout: string): { stop?: unknown } | undefined {
  const line = stdout.trimEnd().split('\n').at(-1);
  try {
    return line ? (JSON.parse(line) as { stop?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

/** `npm run bench -- --only foxglove-fuzz [--foxglove-fuzz-messages N] [--foxglove-fuzz-seconds S]`. */
export async function benchFoxgloveFuzz(messages = 10_000, seconds = 60): Promise<BenchResult> {
  const load = load1();
  const x = await fuzzFoxgloveRun(messages, seconds);
  const ok =
    x.exitCode === 0 &&
    x.stop === '{"kind":"done"}' &&
    !x.stackTrace &&
    x.ticksInFile === x.ticksInSummary &&
    x.ticksInFile > 0 &&
    x.read >= messages &&
    x.rateClosed >= 1;
  return section(
    `Foxglove live view: random client messages against a run (real time, mock rig, --cycle ${seconds} s of loop time, load ${load.toFixed(1)})`,
    [
      [
        'client messages read by the run',
        String(x.read),
        `(its own count; ${x.sent} sent, the rest after their client was closed or the run ended; target >= ${messages})`,
      ],
      ['connections', String(x.connections), `${x.closed} closed by the run for a message outside the protocol, ${x.refused} refused`],
      [
        'a client flooding past its budget',
        x.rateClosed >= 1 ? 'closed' : 'NOT CLOSED',
        `${x.rateClosed} closed for their rate (CLIENT_RATE ${CLIENT_RATE.perSecond}/s, bursts of ${CLIENT_RATE.burst}); ${FLOOD_MESSAGES} sent at once`,
      ],
      [
        'main thread handling client messages',
        `${x.handlingMs.toFixed(1)} ms`,
        `${x.read > 0 ? ((x.handlingMs * 1000) / x.read).toFixed(0) : 0} us a message in wall time (preemption included), ${Number.isFinite(x.cpuUsPerMessage) ? x.cpuUsPerMessage.toFixed(0) : '?'} us of CPU (sampled every 16th; the run's own count)`,
      ],
      ["the clients' CPU (this process)", `${x.clientsCpuS.toFixed(2)} s`, `over ${x.wallS.toFixed(1)} s`],
      ['status replies received', String(x.statusReplies), '(valid requests the server does not offer, bad ids)'],
      ['run', `exit ${x.exitCode}`, `stop ${x.stop}, stack trace: ${x.stackTrace ? 'YES' : 'no'}`],
      [
        'recording',
        `${x.ticksInFile} ticks`,
        `summary says ${x.ticksInSummary}${x.ticksInFile === x.ticksInSummary ? ' (complete)' : ' (INCOMPLETE)'}`,
      ],
      ['verdict', ok ? 'pass' : 'FAIL', `wall ${x.wallS.toFixed(1)} s`],
      ...(ok
        ? []
        : x.stderr
            .trimEnd()
            .split('\n')
            .slice(-8)
            .map((l): [string, string, string] => ['  run stderr', '', l])),
    ],
    { ...x, stderr: ok ? '' : x.stderr.slice(-2000), stackTrace: x.stackTrace ? 1 : 0, exitCode: x.exitCode ?? -1, ok: ok ? 1 : 0, load },
  );
}
