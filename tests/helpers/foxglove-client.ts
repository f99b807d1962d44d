// A Foxglove WebSocket client speaking protocol v1 (foxglove/ws-protocol docs/spec.md), for tests:
// it reads serverInfo and advertise, subscribes, and decodes the binary message frames
// (opcode 0x01, uint32 subscription id, uint64 timestamp [ns], payload; little-endian).
import WebSocket from 'ws';

export interface Advertised {
  id: number;
  topic: string;
  encoding: string;
  schemaName: string;
  schema: string;
  schemaEncoding?: string;
}

export interface Received {
  topic: string;
  ns: bigint;
  data: Buffer;
}

export class FoxgloveTestClient {
  readonly ws: WebSocket;
  serverInfo: Record<string, unknown> | undefined;
  channels: Advertised[] = [];
  readonly received: Received[] = [];
  private readonly subs = new Map<number, string>();
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | undefined;

  constructor(url: string, protocols: string[]) {
    this.ws = new WebSocket(url, protocols);
    this.ws.on('error', () => undefined);
    this.ws.on('message', (d: Buffer, binary: boolean) => {
      if (!binary) {
        const m = JSON.parse(String(d)) as { op: string; channels?: Advertised[] };
        if (m.op === 'serverInfo') this.serverInfo = m;
        if (m.op === 'advertise') this.channels.push(...m.channels!);
      } else if (d[0] === 0x01) {
        this.received.push({ topic: this.subs.get(d.readUInt32LE(1)) ?? '?', ns: d.readBigUInt64LE(5), data: d.subarray(13) });
      }
      this.wake();
    });
    this.ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves once `cond` holds, checking after every message (never on a clock). */
  async until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Subscribes to topics (all advertised ones by default); subscription ids start at 100. */
  subscribe(topics = this.channels.map((c) => c.topic)): void {
    const subscriptions = topics.map((t, i) => {
      const c = this.channels.find((x) => x.topic === t)!;
      this.subs.set(100 + i, t);
      return { id: 100 + i, channelId: c.id };
    });
    this.ws.send(JSON.stringify({ op: 'subscribe', subscriptions }));
  }

  on(topic: string): Received[] {
    return this.received.filter((m) => m.topic === topic);
  }
}
