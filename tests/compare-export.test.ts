// Exports read back with other people's readers: the MCAP with @mcap/core's indexed reader has every
// tick (at its log time, with its content) and the header; the CSV parsed by a CSV parser gives back
// every value of every tick.
import { readFileSync } from 'node:fs';
import { McapIndexedReader } from '@mcap/core';
import { read as readDsv } from 'vega';
import { describe, expect, it } from 'vitest';
import { csvColumns, exportCsv, exportMcap, MCAP_TOPICS } from '../src/record/export.js';
import { tmp, writeSynthetic, type SyntheticRun } from './compare-synthetic.js';

const run: SyntheticRun = {
  rateHz: 200,
  q0: [-0.2, 0.1],
  approachS: 0.25,
  parkS: 0.25,
  idleTicks: 4,
  error: (tau, j) => 0.003 * Math.sin(7 * tau + j),
  residual: (t, j) => 0.001 * t * (j + 1),
  stale: (k) => k % 11 === 3,
};

/** The tick lines of a recording as objects, without "kind". */
function tickLines(lines: string[]): Record<string, unknown>[] {
  return lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.kind === 'tick')
    .map(({ kind: _kind, ...rest }) => rest);
}

describe('MCAP export', () => {
  it('has every tick on /twolink/tick at its log time, events, a JSON schema per channel, and the header as metadata', async () => {
    const { file, lines } = writeSynthetic(run);
    const out = tmp('run.mcap');
    const r = await exportMcap(file, out);
    const ticks = tickLines(lines);
    expect(r.ticks).toBe(ticks.length);

    const bytes = readFileSync(out);
    const reader = await McapIndexedReader.Initialize({
      readable: {
        size: async () => BigInt(bytes.length),
        read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
      },
    });
    // The scene's channels (the arm in 3D) are tests/viz-mcap.test.ts's.
    const channels = [...reader.channelsById.values()].filter((c) => c.topic.startsWith('/twolink/'));
    expect(channels.map((c) => c.topic).sort()).toEqual([MCAP_TOPICS.event, MCAP_TOPICS.tick]);
    for (const c of channels) {
      expect(c.messageEncoding).toBe('json');
      const schema = reader.schemasById.get(c.schemaId)!;
      expect(schema.encoding).toBe('jsonschema');
      expect(JSON.parse(new TextDecoder().decode(schema.data)).type).toBe('object');
    }
    const tickChannel = channels.find((c) => c.topic === MCAP_TOPICS.tick)!.id;
    const eventChannel = channels.find((c) => c.topic === MCAP_TOPICS.event)!.id;
    let scene = 0;
    const start = BigInt(Date.parse('2026-01-02T03:04:05.000Z')) * 1_000_000n;
    const got: Record<string, unknown>[] = [];
    let events = 0;
    for await (const m of reader.readMessages()) {
      if (m.channelId !== tickChannel) {
        if (m.channelId === eventChannel) events++;
        else scene++;
        continue;
      }
      const o = JSON.parse(new TextDecoder().decode(m.data)) as { t: number };
      expect(m.logTime).toBe(start + BigInt(Math.round(o.t * 1e9)));
      got.push(o);
    }
    expect(got).toHaveLength(ticks.length);
    expect(got).toEqual(ticks);
    expect(events).toBe(1);
    expect(reader.statistics?.messageCount).toBe(BigInt(ticks.length + 1 + scene));

    const meta = [];
    for await (const m of reader.readMetadata()) meta.push(m);
    const header = meta.find((m) => m.name === 'twolink.header')!;
    expect(header.metadata.get('rateHz')).toBe('200');
    expect(JSON.parse(header.metadata.get('trajectories')!)[0].name).toBe('synthetic');
    expect(JSON.parse(header.metadata.get('rig')!).name).toBe('mock-arm');
    expect(meta.find((m) => m.name === 'twolink.summary')!.metadata.get('stopReason')).toBe('done');
  });
});

describe('CSV export', () => {
  it('round-trips: one header row, then every value of every tick', async () => {
    const { file, lines } = writeSynthetic(run);
    const out = tmp('run.csv');
    await exportCsv(file, out);
    const text = readFileSync(out, 'utf8');
    const header = text.slice(0, text.indexOf('\n')).split(',');
    expect(header).toEqual(csvColumns(2).map((c) => c.name));
    expect(header.slice(0, 8)).toEqual(['t_s', 'i', 'state', 'state_code', 'trajT_s', 'phase', 'phase_code', 'des_q1_rad']);
    const rows = readDsv(text, { type: 'csv' }) as Record<string, string>[];
    const ticks = tickLines(lines) as unknown as {
      t: number;
      state: string;
      phase: string;
      trajT: number;
      des: { q: number[]; qdd: number[] };
      meas: { q: number[] };
      twin: { res: number[] };
      tau: { cmd: number[] };
      timing: { errUs: number };
      fresh: number;
    }[];
    expect(rows).toHaveLength(ticks.length);
    ticks.forEach((k, n) => {
      const r = rows[n]!;
      expect(Number(r.t_s)).toBe(k.t);
      expect(r.state).toBe(k.state);
      expect(r.phase).toBe(k.phase);
      expect(Number(r.trajT_s)).toBe(k.trajT);
      for (let j = 0; j < 2; j++) {
        expect(Number(r[`des_q${j + 1}_rad`])).toBe(k.des.q[j]);
        expect(Number(r[`des_qdd${j + 1}_rad_s2`])).toBe(k.des.qdd[j]);
        expect(Number(r[`meas_q${j + 1}_rad`])).toBe(k.meas.q[j]);
        expect(Number(r[`twin_res${j + 1}_rad`])).toBe(k.twin.res[j]);
        expect(Number(r[`tau_cmd${j + 1}_Nm`])).toBe(k.tau.cmd[j]);
      }
      expect(Number(r.timing_err_us)).toBe(k.timing.errUs);
      expect(Number(r.fresh)).toBe(k.fresh);
    });
  });

  it('a one-link recording has one column per joint quantity', () => {
    const names = csvColumns(1).map((c) => c.name);
    expect(names).toContain('meas_q1_rad');
    expect(names).not.toContain('meas_q2_rad');
  });
});
