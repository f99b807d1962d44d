/**
 * `--foxglove [PORT]` and `--foxglove-host ADDR` of `twolink run` and `twolink demo`: the live view
 * in Foxglove (src/viz/live.ts). Loopback only unless another address is given, with a warning;
 * browsers' connections only from Foxglove's apps unless `--foxglove-allow-origin` adds an origin.
 */
import type { Rig } from '../config/load.js';
import type { LiveView } from '../viz/live-view.js';
import { checkOrigin, FOXGLOVE_APP_ORIGINS } from '../viz/live-protocol.js';
import { writeRunReport } from '../run/run-report.js';
import { errorMessage, numberArg, UsageError, type OptionSpecs, type ParsedOf } from './args.js';

export const FOXGLOVE_OPTIONS = {
  foxglove: {
    type: 'string',
    arg: '[PORT]',
    help: 'serve the live view to Foxglove on ws://127.0.0.1:PORT (default 8765; 0: any free port): the measured, desired and twin arms in 3D, the endpoint path and force, the ticks, at 60 Hz of the loop clock (docs/foxglove.md)',
  },
  'foxglove-host': {
    type: 'string',
    arg: 'ADDR',
    help: 'with --foxglove: listen on ADDR instead of 127.0.0.1 (anyone who reaches it sees the run; twolink warns)',
  },
  'foxglove-allow-origin': {
    type: 'string',
    arg: 'ORIGIN',
    multiple: true,
    help: `with --foxglove: also let browser pages from ORIGIN (scheme://host[:port]) connect; by default only clients that send no Origin and Foxglove's apps (${FOXGLOVE_APP_ORIGINS.join(', ')}) may (repeat for more; docs/foxglove.md)`,
  },
} as const satisfies OptionSpecs;

/** Default port of Foxglove's WebSocket connections (the one its "Open connection" dialog and ws-protocol's examples use). */
export const FOXGLOVE_PORT = 8765;

const loopback = (host: string): boolean => host === 'localhost' || host === '::1' || /^127\./.test(host);

/** `--foxglove` alone or before another option takes the default port: written `--foxglove=8765` for the parser. */
export function foxgloveArgv(argv: readonly string[], defaultPort: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--foxglove') out.push(argv[i]!);
    else if (argv[i + 1] !== undefined && /^\d+$/.test(argv[i + 1]!)) out.push(`--foxglove=${argv[++i]}`);
    else out.push(`--foxglove=${defaultPort}`);
  }
  return out;
}

/** Starts the live view when asked (before the run: a taken port is a usage error, nothing moved yet). */
export async function startLiveView(v: ParsedOf<typeof FOXGLOVE_OPTIONS>, rig: Rig): Promise<LiveView | undefined> {
  if (v.foxglove === undefined) {
    if (v['foxglove-host'] !== undefined) throw new UsageError('--foxglove-host goes with --foxglove [PORT]');
    if (v['foxglove-allow-origin'] !== undefined) throw new UsageError('--foxglove-allow-origin goes with --foxglove [PORT]');
    return undefined;
  }
  const allowOrigins = (v['foxglove-allow-origin'] ?? []).map((o) => {
    const r = checkOrigin(o);
    if (!r.ok) throw new UsageError(`--foxglove-allow-origin ${JSON.stringify(o)}: ${r.reason}`);
    return r.origin;
  });
  const port = numberArg(v.foxglove, 'foxglove', { min: 0, max: 65535, integer: true });
  const host = typeof v['foxglove-host'] === 'string' ? v['foxglove-host'] : '127.0.0.1';
  const { LIVE_PLACEMENT, startLiveView: startView } = await import('../viz/live-view.js');
  const { tickJsonSchema } = await import('../record/export.js');
  let live: LiveView;
  try {
    live = await startView({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, host, port, LIVE_PLACEMENT, {
      allowOrigins,
    });
  } catch (e) {
    throw new UsageError(`--foxglove ${port}: cannot listen on ${host}:${port}: ${errorMessage(e)}`);
  }
  if (!loopback(host))
    process.stderr.write(
      `twolink: WARNING: the Foxglove live view listens on ${host}, not loopback: anyone who can reach it sees the arm and the run (no password)\n`,
    );
  process.stderr.write(
    `twolink: Foxglove live view on ws://${host.includes(':') ? `[${host}]` : host}:${live.port} (open it in Foxglove with docs/foxglove-layout.json)\n`,
  );
  writeRunReport({ kind: 'live', port: live.port }); // (TWOLINK_REPORT_FD: the port as a value, for a program)
  return live;
}

/** Runs `f` with the live view when asked (--foxglove), and closes the view when `f` is done or fails. */
export async function withLiveView<T>(
  v: ParsedOf<typeof FOXGLOVE_OPTIONS>,
  rig: Rig,
  f: (live: LiveView | undefined) => Promise<T>,
): Promise<T> {
  const live = await startLiveView(v, rig);
  try {
    return await f(live);
  } finally {
    const s = live?.stats;
    if (s && s.requests + s.refused > 0) {
      const cpuUs = s.cpuSamples > 0 ? s.cpuSampledNs / s.cpuSamples / 1000 : undefined;
      process.stderr.write(
        `twolink: Foxglove live view: ${s.requests} client messages read, ${s.closed} clients closed for a message outside the protocol, ${s.refused} connections refused, ${s.rateClosed} clients closed for their message rate; handling them took ${s.handlingMs.toFixed(1)} ms of the main thread (${s.requests > 0 ? ((s.handlingMs * 1000) / s.requests).toFixed(0) : 0} us each; CPU ${cpuUs !== undefined ? cpuUs.toFixed(0) : '?'} us each, sampled)\n`,
      );
      const { requests, closed, refused, rateClosed, handlingMs } = s;
      writeRunReport({ kind: 'live-end', requests, closed, refused, rateClosed, handlingMs, cpuUsPerMessage: cpuUs ?? null });
    }
    await live?.close();
  }
}
