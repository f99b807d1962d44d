/**
 * What a client of the live view may send, as zod schemas of the Foxglove WebSocket protocol v1's
 * client operations (foxglove/ws-protocol docs/spec.md, "Sent by client"), and the origins that may
 * connect. The server (viz/live.ts) parses every client message here before acting on it: a message
 * that is not one of these closes that client with the reason returned, and never reaches the run.
 *
 * From the spec: each text message is a JSON object whose `op` names it; each binary message starts
 * with a 1-byte opcode; integers in binary messages are little-endian. The client's JSON operations
 * are `subscribe` {subscriptions: [{id, channelId}]}, `unsubscribe` {subscriptionIds}, the client's
 * `advertise` {channels: [{id, topic, encoding, schemaName, schema?, schemaEncoding?}]} and
 * `unadvertise` {channelIds} (capability clientPublish), `getParameters` {parameterNames, id?},
 * `setParameters` {parameters: [{name, value?, type?}], id?}, `subscribeParameterUpdates` and
 * `unsubscribeParameterUpdates` {parameterNames} (parameters, parametersSubscribe),
 * `subscribeConnectionGraph` and `unsubscribeConnectionGraph` (connectionGraph), `fetchAsset` {uri,
 * requestId: uint32} (assets). The binary ones are Client Message Data (0x01, uint32 channel id,
 * payload; clientPublish) and Service Call Request (0x02, uint32 service id, uint32 call id, uint32
 * encoding length, the encoding, payload; services). Subscription ids are chosen by the client and
 * are written into every message frame as a uint32, so they are uint32 here; so are channel ids.
 *
 * twolink declares no capability (serverInfo `capabilities: []`), so only subscribe and unsubscribe
 * are acted on; the others are valid requests for what this server does not offer, answered with a
 * status message (level 2) and otherwise ignored.
 */
import { z } from 'zod';

/** A uint32 (subscription, channel, request ids): an integer in [0, 2^32 - 1]. */
const uint32 = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 1);

/** ParameterValue of setParameters: number | boolean | string | their arrays | absent (unset). */
const parameterValue = z.union([z.number(), z.boolean(), z.string(), z.array(z.number()), z.array(z.boolean()), z.array(z.string())]);

/** The client's JSON operations (spec.md, "Sent by client"). Unknown fields are allowed (later versions may add some) and dropped. */
export const clientJsonOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('subscribe'), subscriptions: z.array(z.object({ id: uint32, channelId: uint32 })) }),
  z.object({ op: z.literal('unsubscribe'), subscriptionIds: z.array(uint32) }),
  z.object({
    op: z.literal('advertise'),
    channels: z.array(
      z.object({
        id: uint32,
        topic: z.string(),
        encoding: z.string(),
        schemaName: z.string(),
        schema: z.string().optional(),
        schemaEncoding: z.string().optional(),
      }),
    ),
  }),
  z.object({ op: z.literal('unadvertise'), channelIds: z.array(uint32) }),
  z.object({ op: z.literal('getParameters'), parameterNames: z.array(z.string()), id: z.string().optional() }),
  z.object({
    op: z.literal('setParameters'),
    parameters: z.array(
      z.object({ name: z.string(), value: parameterValue.optional(), type: z.enum(['byte_array', 'float64', 'float64_array']).optional() }),
    ),
    id: z.string().optional(),
  }),
  z.object({ op: z.literal('subscribeParameterUpdates'), parameterNames: z.array(z.string()) }),
  z.object({ op: z.literal('unsubscribeParameterUpdates'), parameterNames: z.array(z.string()) }),
  z.object({ op: z.literal('subscribeConnectionGraph') }),
  z.object({ op: z.literal('unsubscribeConnectionGraph') }),
  z.object({ op: z.literal('fetchAsset'), uri: z.string(), requestId: uint32 }),
]);

export type ClientJsonOp = z.infer<typeof clientJsonOp>;

/** The client's binary operations, as parsed. */
export type ClientBinaryOp =
  { op: 'clientMessageData'; channelId: number } | { op: 'serviceCallRequest'; serviceId: number; callId: number; encoding: string };

/** A client's message, parsed: a request, or why it is not one. */
export type ClientMessage = { ok: true; request: ClientJsonOp | ClientBinaryOp } | { ok: false; reason: string };

/** The capability each operation needs (spec.md); subscribe and unsubscribe need none. */
export const OP_CAPABILITY: Record<Exclude<(ClientJsonOp | ClientBinaryOp)['op'], 'subscribe' | 'unsubscribe'>, string> = {
  advertise: 'clientPublish',
  unadvertise: 'clientPublish',
  clientMessageData: 'clientPublish',
  getParameters: 'parameters',
  setParameters: 'parameters',
  subscribeParameterUpdates: 'parametersSubscribe',
  unsubscribeParameterUpdates: 'parametersSubscribe',
  subscribeConnectionGraph: 'connectionGraph',
  unsubscribeConnectionGraph: 'connectionGraph',
  fetchAsset: 'assets',
  serviceCallRequest: 'services',
};

/** A zod error's first issue, as `field.path: message`. */
function firstIssue(e: z.ZodError): string {
  const i = e.issues[0];
  if (!i) return 'not a client operation';
  const path = i.path.map((p, k) => (typeof p === 'number' ? `[${p}]` : `${k === 0 ? '' : '.'}${String(p)}`)).join('');
  return path ? `${path}: ${i.message}` : i.message;
}

/** Parses a client's text message (a JSON object with an `op` the spec lists for clients). */
export function parseClientText(text: string): ClientMessage {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { ok: false, reason: `not a JSON object (${json === null ? 'null' : Array.isArray(json) ? 'an array' : typeof json})` };
  const op = (json as { op?: unknown }).op;
  if (typeof op !== 'string') return { ok: false, reason: 'no op' };
  const r = clientJsonOp.safeParse(json);
  if (!r.success)
    return {
      ok: false,
      reason:
        r.error.issues[0]?.code === 'invalid_union' && r.error.issues[0].path.length <= 1
          ? `op ${JSON.stringify(op.slice(0, 40))} is not a client operation of the protocol`
          : `${op}: ${firstIssue(r.error)}`,
    };
  return { ok: true, request: r.data };
}

/** Parses a client's binary message: Client Message Data (0x01) or Service Call Request (0x02). */
export function parseClientBinary(b: Uint8Array): ClientMessage {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length === 0) return { ok: false, reason: 'an empty binary message' };
  const opcode = b[0]!;
  if (opcode === 0x01) {
    if (b.length < 5) return { ok: false, reason: `client message data of ${b.length} bytes (at least 5: opcode, uint32 channel id)` };
    return { ok: true, request: { op: 'clientMessageData', channelId: v.getUint32(1, true) } };
  }
  if (opcode === 0x02) {
    if (b.length < 13) return { ok: false, reason: `service call request of ${b.length} bytes (at least 13)` };
    const n = v.getUint32(9, true);
    if (13 + n > b.length) return { ok: false, reason: `service call request: encoding length ${n} past the message's ${b.length} bytes` };
    return {
      ok: true,
      request: {
        op: 'serviceCallRequest',
        serviceId: v.getUint32(1, true),
        callId: v.getUint32(5, true),
        encoding: Buffer.from(b.buffer, b.byteOffset + 13, n).toString('latin1'),
      },
    };
  }
  return { ok: false, reason: `binary opcode 0x${opcode.toString(16).padStart(2, '0')} is not a client operation of the protocol` };
}

/**
 * The origins of Foxglove's own apps, allowed by default beside clients that send no Origin header
 * (every non-browser client: the `ws` package, Python's websockets, foxglove_bridge's tools):
 * - `https://app.foxglove.dev`: Foxglove's web app (the README of @foxglove/ws-protocol-examples
 *   0.10.0 on npm opens `https://app.foxglove.dev/~/view?ds=foxglove-websocket&ds.url=ws://localhost:8765/`).
 * - `https://studio.foxglove.dev`: the web app's earlier address (foxglove/ws-protocol's
 *   typescript/ws-protocol-examples/README.md in earlier versions, and foxglove-websocket 0.0.4's
 *   README on PyPI, open it to connect to `ws://localhost:8765/`).
 * - `file://`: the desktop app. It is Electron, and its window loads the app from file:// URLs in
 *   production (foxglove/studio desktop/main/StudioWindow.ts, the webSecurity comment; index.ts's
 *   CSP allows `connect-src ws:`); a WebSocket opened by a page of an Electron BrowserWindow loaded
 *   from a file carries `Origin: file://` (webpack/webpack-dev-server issue #3821, django/channels
 *   PR #1830). A page a browser opened from a local file can send it too: it is allowed as the
 *   desktop app's, and said in docs/foxglove.md.
 * `null` (sandboxed frames, opaque origins: any page can make one) is never allowed.
 */
export const FOXGLOVE_APP_ORIGINS = ['https://app.foxglove.dev', 'https://studio.foxglove.dev', 'file://'] as const;

/**
 * An origin as a browser sends it (RFC 6454: scheme://host[:port], lower case, no path), checked; or
 * why not. `file://` is one; `null` is refused (any page can send it from a sandboxed frame).
 */
export function checkOrigin(text: string): { ok: true; origin: string } | { ok: false; reason: string } {
  const t = text.trim().toLowerCase();
  if (t === 'file://') return { ok: true, origin: t };
  if (t === 'null') return { ok: false, reason: '"null" is the origin of sandboxed frames, which any page can make: it cannot be allowed' };
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return { ok: false, reason: 'not a URL origin (scheme://host[:port], e.g. http://localhost:8080)' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { ok: false, reason: `scheme ${u.protocol} (an origin that connects is http:// or https://, or file://)` };
  if (u.origin !== t)
    return { ok: false, reason: `an origin is scheme://host[:port] with no path, query or trailing slash (this one is ${u.origin})` };
  return { ok: true, origin: t };
}

/** `s` cut to at most `max` bytes of UTF-8 on a character boundary (a close reason is at most 123 bytes: RFC 6455 5.5). */
export function utf8Cut(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = '';
  let n = 0;
  for (const ch of s) {
    const b = Buffer.byteLength(ch);
    if (n + b > max - 3) break;
    out += ch;
    n += b;
  }
  return `${out}...`;
}
