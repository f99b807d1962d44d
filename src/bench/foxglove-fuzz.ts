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
import { parseClientBinary, parseClientText } from '../viz/live-protocol.js';
import { load1, section, type BenchResult } from './report.js';
import { spawnLiveChild } from './live-child.js';

const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));
/** Clients connected at once (under the server's cap of 8). */
const CONCURRENT = 4;

/** One random client message: text, binary, or a ping. */
export type FuzzMessage = { text: string } | { binary: Uint8Array } | { ping: Uint8Array };

/** A random client message from `r` (uniform in [0, 1)); about one in thirteen is outside the protocol (its client is closed; 7.5 % of 100,000 with seed 1). */
export function randomClientMessage(r: () => number): FuzzMessage {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const id = (): unknown => (r() < 0.97 ? Math.floor(r() * 13) : pick([-1, 1e12, 2 ** 32, 2 ** 32 - 1, -0, 0.5, 1e300, null, '1']));
  const channel = (): unknown => (r() < 0.95 ? 1 + Math.floor(r() * 8) : pick([0, 9, 99, -1, 2 ** 32]));
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
  const u = r();
  if (u < 0.35) return { text: JSON.stringify({ op: 'subscribe', subscriptions: Array.from({ length: Math.floor(r() * 4) }, () => ({ id: id(), channelId: channel() })) }) };
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

/** One run with `messages` or more random client messages read; `seconds` of loop time (--cycle). */
export async function fuzzFoxgloveRun(messages: number, seconds: number, seed = 32): Promise<FoxgloveFuzzFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-fuzz-fox-'));
  const record = join(dir, 'run.ndjson');
  const t0 = Date.now();
  const child = spawnLiveChild(
    BIN,
    ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--cycle', '--max-seconds', String(seconds), '--json', '--record', record, '--foxglove', '0'],
    fileURLToPath(new URL('../..', import.meta.url)),
  );
  const listening = child.port;
  const exited = child.done.then((e) => e.code);
  let ended = false;
  void exited.then(() => (ended = true));
  const r = mulberry32(seed);
  const f = { sent: 0, connections: 0, statusReplies: 0 };
  const p = await listening;
  // Each client sends until the server closes it (a message outside the protocol) or the run ends.
  const clientLoop = async (): Promise<void> => {
    while (!ended && f.sent < messages * 1.02) {
      if (f.connections > 0 && child.exited()) break;
      f.connections++;
      await new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${p}`, ['foxglove.sdk.v1']);
        ws.on('error', () => undefined);
        ws.on('close', () => resolve());
        ws.on('unexpected-response', () => resolve());
        ws.on('message', (d: Buffer, binary: boolean) => {
          if (!binary && d.includes('"status"')) f.statusReplies++;
        });
        const send = async (): Promise<void> => {
          while (ws.readyState === ws.OPEN && f.sent < messages * 1.02) {
            const m = randomClientMessage(r);
            if ('text' in m) ws.send(m.text);
            else if ('binary' in m) ws.send(m.binary);
            else ws.ping(m.ping);
            f.sent++;
            // After a message outside the protocol the server reads nothing more from this client: it waits to be closed.
            const outside = 'text' in m ? !parseClientText(m.text).ok : 'binary' in m ? !parseClientBinary(m.binary).ok : false;
            if (outside) return;
            // Let the socket drain now and then: a client that floods is bounded by its own socket, not the server's memory.
            if (f.sent % 20 === 0) await new Promise((res) => setImmediate(res));
          }
          ws.close();
        };
        ws.on('open', () => void send().catch(reject));
      });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT }, clientLoop));
  const { code: exitCode, stdout, stderr } = await child.done;
  const summary = lastJsonLine(stdout);
  const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!) as { kind?: string; ticks?: number };
  const ticksInFile = lines.filter((l) => l.startsWith('{"kind":"tick"')).length;
  rmSync(dir, { recursive: true, force: true });
  const counts = /(\d+) client messages read, (\d+) clients closed for a message outside the protocol, (\d+) connections refused/.exec(stderr);
  return {
    read: Number(counts?.[1] ?? 0),
    sent: f.sent,
    connections: f.connections,
    closed: Number(counts?.[2] ?? 0),
    refused: Number(counts?.[3] ?? 0),
    statusReplies: f.statusReplies,
    exitCode,
    stop: JSON.stringify(summary?.stop ?? null),
    ticksInFile,
    ticksInSummary: last.kind === 'summary' ? (last.ticks ?? -1) : -1,
    stackTrace: /\n\s+at .+:\d+:\d+/.test(stderr),
    wallS: (Date.now() - t0) / 1000,
    stderr,
  };
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
  const ok = x.exitCode === 0 && x.stop === '{"kind":"done"}' && !x.stackTrace && x.ticksInFile === x.ticksInSummary && x.ticksInFile > 0 && x.read >= messages;
  return section(
    `Foxglove live view: random client messages against a run (real time, mock rig, --cycle ${seconds} s of loop time, load ${load.toFixed(1)})`,
    [
      ['client messages read by the run', String(x.read), `(its own count; ${x.sent} sent, the rest after their client was closed or the run ended; target >= ${messages})`],
      ['connections', String(x.connections), `${x.closed} closed by the run for a message outside the protocol, ${x.refused} refused`],
      ['status replies received', String(x.statusReplies), '(valid requests the server does not offer, bad ids)'],
      ['run', `exit ${x.exitCode}`, `stop ${x.stop}, stack trace: ${x.stackTrace ? 'YES' : 'no'}`],
      ['recording', `${x.ticksInFile} ticks`, `summary says ${x.ticksInSummary}${x.ticksInFile === x.ticksInSummary ? ' (complete)' : ' (INCOMPLETE)'}`],
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
