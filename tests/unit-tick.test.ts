// The tick format's one table and the views generated from it: the row <-> object round trip, what an
// older recording's line (no `sample`, no `dutyIn`) becomes, and the CSV columns and MCAP schema
// covering every field of the NDJSON line.
import { describe, expect, it } from 'vitest';
import { csvColumns, tickJsonSchema } from '../src/record/export.js';
import { F, LOOP_STATES, PHASES, TICK_FIELDS, TICK_TABLE, TICK_WIDTH, tickJson, tickObject, tickRow } from '../src/telemetry/tick.js';
import { mulberry32 } from '../src/model/random.js';

const rnd = mulberry32(13);
function randomRow(): Float64Array {
  const r = new Float64Array(TICK_WIDTH).map(() => rnd() * 20 - 10);
  r[F.state] = Math.floor(rnd() * LOOP_STATES.length);
  r[F.phase] = Math.floor(rnd() * PHASES.length);
  return r;
}

describe('the tick table', () => {
  it('row slots: one per scalar, two per joint field, named uniquely, offsets in order', () => {
    const perJoint = TICK_TABLE.filter((s) => 'joints' in s).length;
    expect(TICK_WIDTH).toBe(TICK_TABLE.length + perJoint);
    expect(new Set(TICK_FIELDS).size).toBe(TICK_WIDTH);
    TICK_FIELDS.forEach((f, i) => expect(F[f]).toBe(i));
  });

  it('row -> object -> row is the identity (two joints), and keeps joint 1 with joint 2 zero (one joint)', () => {
    for (let k = 0; k < 200; k++) {
      const r = randomRow();
      const back = new Float64Array(TICK_WIDTH);
      tickRow(JSON.parse(JSON.stringify(tickObject(r, 2))), back);
      expect(back).toEqual(r);
      const one = new Float64Array(TICK_WIDTH);
      tickRow(JSON.parse(JSON.stringify(tickObject(r, 1))), one);
      for (const s of TICK_TABLE) {
        const at = F[('joints' in s ? `${s.row}0` : s.row) as keyof typeof F];
        expect(one[at]).toBe(r[at]);
        if ('joints' in s) expect(one[at + 1]).toBe(0);
      }
    }
  });

  it('the NDJSON object: groups nested, words for codes, keys in the order recordings have always had', () => {
    const r = randomRow();
    r[F.state] = LOOP_STATES.indexOf('track');
    r[F.phase] = PHASES.indexOf('park');
    const o = tickObject(r, 2);
    expect(Object.keys(o)).toEqual([
      't',
      'i',
      'state',
      'trajT',
      'phase',
      'des',
      'meas',
      'twin',
      'tau',
      'duty',
      'timing',
      'link',
      'alarm',
      'flags',
      'boardT',
      'fresh',
      'sat',
      'sample',
      'dutyIn',
      'fEst',
      'stiffness',
      'float',
      'plant',
    ]);
    expect(o.state).toBe('track');
    expect(o.phase).toBe('park');
    expect(o.twin.tauExt).toEqual([r[F.tauExt0], r[F.tauExt1]]);
    expect(o.timing.errUs).toBe(r[F.errUs]);
  });

  it('an older line without sample and dutyIn: the sample is -1, the duty applied is the duty sent', () => {
    const o = tickObject(randomRow(), 2) as Record<string, unknown>;
    delete o.sample;
    delete o.dutyIn;
    const row = new Float64Array(TICK_WIDTH);
    tickRow(o, row);
    expect(row[F.sample]).toBe(-1);
    expect([row[F.dutyIn0], row[F.dutyIn1]]).toEqual(o.duty);
  });

  it('CSV: a column per scalar, per joint, and word + code for coded fields; values straight from the row', () => {
    const r = randomRow();
    const cols = csvColumns(2);
    const coded = TICK_TABLE.filter((s) => 'codes' in s).length;
    expect(cols).toHaveLength(TICK_WIDTH + coded);
    expect(new Set(cols.map((c) => c.name)).size).toBe(cols.length);
    const byName = new Map(cols.map((c) => [c.name, c.get(r)]));
    expect(byName.get('twin_tauExt2_Nm')).toBe(r[F.tauExt1]);
    expect(byName.get('timing_err_us')).toBe(r[F.errUs]);
    expect(byName.get('state')).toBe(LOOP_STATES[r[F.state]!]);
    expect(byName.get('duty_in1')).toBe(r[F.dutyIn0]);
    expect(csvColumns(1)).toHaveLength(TICK_WIDTH + coded - TICK_TABLE.filter((s) => 'joints' in s).length);
  });

  it('the MCAP JSON schema describes every key of the tick object, with its unit', () => {
    const schema = tickJsonSchema(2) as { properties: Record<string, { properties?: Record<string, { description: string }> }> };
    const o = tickObject(randomRow(), 2) as Record<string, unknown>;
    for (const [k, v] of Object.entries(o)) {
      expect(schema.properties[k], k).toBeTypeOf('object');
      if (v && typeof v === 'object' && !Array.isArray(v)) expect(Object.keys(schema.properties[k]!.properties!)).toEqual(Object.keys(v));
    }
    expect(schema.properties.meas!.properties!.qd!.description).toMatch(/\[rad\/s\]$/);
  });
});

describe('tickJson', () => {
  it('is JSON.stringify(tickObject(row)) at random rows, one joint and two, NaN, infinities, -0 and bad codes included', () => {
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1e-300, 123456789.123, -2.5];
    for (let k = 0; k < 300; k++) {
      const row = Array.from({ length: TICK_WIDTH }, () =>
        rnd() < 0.1 ? odd[Math.floor(rnd() * odd.length)]! : (rnd() - 0.5) * 10 ** Math.floor(rnd() * 8 - 3),
      );
      // Codes: mostly valid, some out of range or fractional.
      row[F.state] = k % 7 === 0 ? 99 : k % 11 === 0 ? 0.5 : Math.floor(rnd() * 3);
      row[F.phase] = Math.floor(rnd() * 4);
      for (const joints of [1, 2]) expect(tickJson(row, joints)).toBe(JSON.stringify(tickObject(row, joints)));
    }
  });
});
