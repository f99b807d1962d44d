/**
 * A Foxglove v1 client in its own process for the live view's bench (bench/foxglove.ts), so that its
 * reading costs nothing to the process measured: `node dist/bench/foxglove-client.js PORT read|stall
 * [TOPIC,TOPIC...]`. It subscribes to every channel (or the topics given); `stall` then stops reading
 * (a frozen tab: the socket is paused).
 * It prints the frames it read when it is ended.
 */
import WebSocket from 'ws';

const [port, mode, only] = process.argv.slice(2);
const topics = only ? new Set(only.split(',')) : undefined;
const ws = new WebSocket(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
let frames = 0;
ws.on('message', (d: Buffer, binary: boolean) => {
  if (binary) {
    frames++;
    return;
  }
  const m = JSON.parse(String(d)) as { op: string; channels?: { id: number; topic: string }[] };
  if (m.op !== 'advertise') return;
  ws.send(
    JSON.stringify({
      op: 'subscribe',
      subscriptions: m.channels!.filter((c) => !topics || topics.has(c.topic)).map((c, i) => ({ id: i, channelId: c.id })),
    }),
  );
  if (mode !== 'stall') process.stdout.write('ready\n');
  else {
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // A socket that does not read keeps no process alive: this timer does, until SIGTERM.
    setInterval(() => undefined, 1 << 30);
    process.stdout.write('ready\n');
  }
});
ws.on('error', (e) => process.stderr.write(`foxglove-client: ${e.message}\n`));
process.on('SIGTERM', () => {
  process.stdout.write(`frames ${frames}\n`);
  process.exit(0);
});
