// docs/reference/rig-file.md, generated from the rig file's zod schema (src/config/rig.ts and the
// schemas it takes in): zod 4's toJSONSchema gives each field's type, default and bounds; the range
// messages of the schema's refinements (`must be at most 10 m (a bench-top arm)`) and the doc comments
// above the fields (jsdoc.ts) give the rest. `npm run docs:reference` writes it.
import { join } from 'node:path';
import { z } from 'zod';
import { rigFileSchema, twoLinkSchema } from '../../../src/config/rig.js';
import { ROOT } from '../cli.js';
import { docObjects, docsFor, splitDefault, type DocObject } from './jsdoc.js';

/** A JSON Schema node as zod writes it, with the refinements' messages under `x-checks`. */
export interface Json {
  type?: string;
  properties?: Record<string, Json>;
  required?: string[];
  items?: Json;
  prefixItems?: Json[];
  anyOf?: Json[];
  oneOf?: Json[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  pattern?: string;
  'x-checks'?: string[];
}

/** A zod schema as JSON Schema (its input: defaults are optional), each refinement's message kept. */
export function jsonOf(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const checks =
        (ctx.zodSchema as unknown as { _zod: { def: { checks?: { _zod: { def: { check: string; error?: unknown } } }[] } } })._zod.def
          .checks ?? [];
      const messages = checks
        .map((c) => c._zod.def)
        .filter((d) => d.check === 'custom' && typeof d.error === 'function')
        .map((d) => String((d.error as (i: object) => unknown)({})))
        .filter((m) => m !== 'must be a finite number' && m !== 'not a finite number');
      if (messages.length) (ctx.jsonSchema as Json)['x-checks'] = messages;
    },
  }) as Json;
}

/** A table cell: one line, its pipes escaped. */
export const cell = (s: string): string => s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

/** The alternatives of a union, nested unions flattened (a discriminated union inside a union). */
const branches = (s: Json): Json[] | undefined => {
  const alt = s.anyOf ?? s.oneOf;
  return alt?.flatMap((b) => branches(b) ?? [b]);
};
const isObject = (s: Json): boolean => s.type === 'object' && s.properties !== undefined;

/** A field's type in words. */
export function typeOf(s: Json): string {
  const alt = branches(s);
  if (alt && alt.every(isObject)) return `object (${alt.length} forms)`;
  if (alt) return alt.map(typeOf).join(' or ');
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.type === 'array' && s.prefixItems) return `[${s.prefixItems.map(typeOf).join(', ')}]`;
  if (s.type === 'array') return `${s.items && branches(s.items) ? `(${typeOf(s.items)})` : typeOf(s.items ?? {})} list`;
  if (isObject(s)) return 'object';
  return s.type ?? 'any';
}

/** What values a field takes, in words: its bounds and its refinements' messages. */
export function allowedOf(s: Json): string {
  const parts: string[] = [];
  const big = Number.MAX_SAFE_INTEGER;
  if (s.minimum !== undefined && s.maximum !== undefined && s.maximum < big) parts.push(`${s.minimum} to ${s.maximum}`);
  else {
    if (s.minimum !== undefined) parts.push(`>= ${s.minimum}`);
    if (s.maximum !== undefined && s.maximum < big) parts.push(`<= ${s.maximum}`);
  }
  if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
  if (s.exclusiveMaximum !== undefined) parts.push(`< ${s.exclusiveMaximum}`);
  if (s.pattern !== undefined) parts.push(`matches \`/${s.pattern}/\``);
  if (s.minLength !== undefined) parts.push(`at least ${s.minLength} character${s.minLength > 1 ? 's' : ''}`);
  if (s.type === 'array' && !s.prefixItems) {
    if (s.minItems !== undefined || s.maxItems !== undefined) {
      parts.push(
        s.minItems === s.maxItems
          ? `${s.minItems} entries`
          : s.maxItems === undefined
            ? `at least ${s.minItems} entries`
            : `${s.minItems ?? 0} to ${s.maxItems} entries`,
      );
    }
    const each = s.items && !isObject(s.items) && !branches(s.items) ? allowedOf(s.items) : '';
    if (each) parts.push(`each ${each}`);
  }
  if (s.prefixItems) {
    const each = allowedOf(s.prefixItems[0] ?? {});
    if (each) parts.push(`each ${each}`);
  }
  const checks = (s['x-checks'] ?? []).map((m) => m.replace(/^must be /, ''));
  // "> 0" says nothing beside "at least 0.001 m".
  const atLeast = checks.some((c) => /^at least [\d.]+/.test(c) && !c.startsWith('at least 0 '));
  for (const c of checks) if (!(atLeast && c === '> 0')) parts.push(c);
  return parts.join('; ');
}

/** The object a field holds, directly or as the entries of its list, or its object forms (a union). */
function objectsIn(s: Json, path: string): { path: string; schema: Json }[] {
  if (isObject(s)) return [{ path, schema: s }];
  if (s.type === 'array' && s.items) return objectsIn(s.items, `${path}[]`);
  const alt = branches(s);
  if (!alt) return [];
  const objects = alt.filter(isObject);
  const tagOf = (o: Json): [string, Json] | undefined => Object.entries(o.properties!).find(([, p]) => p.const !== undefined);
  const tagKey = objects.map(tagOf).find((t) => t)?.[0];
  return objects.map((o, i) => {
    const tag = tagOf(o);
    const label = tag
      ? `${tag[0]} ${JSON.stringify(tag[1].const)}`
      : tagKey
        ? `another ${tagKey}`
        : objects.length > 1
          ? `form ${i + 1}`
          : 'as an object';
    return { path: `${path} (${label})`, schema: o };
  });
}

const keyset = (props: Record<string, Json>): string => Object.keys(props).sort().join(',');

/** The `.describe()` texts of a schema's objects, by their key sets. */
function describedIn(s: Json, into = new Map<string, Map<string, string>>()): Map<string, Map<string, string>> {
  if (s.properties) {
    const texts = new Map(Object.entries(s.properties).flatMap(([k, p]) => (p.description ? [[k, p.description] as const] : [])));
    if (texts.size) into.set(keyset(s.properties), texts);
  }
  for (const x of [...Object.values(s.properties ?? {}), ...(s.items ? [s.items] : []), ...(branches(s) ?? [])]) describedIn(x, into);
  return into;
}

/** One object of a schema: its heading, what it holds, and the path its fields' sections start with. */
export interface Section {
  heading: string;
  schema: Json;
  doc: string;
  /** Prefix of the paths of the objects inside it (`control.`; '' at the top). */
  prefix: string;
}

interface Docs {
  objects: readonly DocObject[];
  described: Map<string, Map<string, string>>;
}

/** One object's table, and the sections of the objects inside it. */
function table(sec: Section, d: Docs, out: string[]): Section[] {
  const props = sec.schema.properties ?? {};
  const docs = docsFor(d.objects, Object.keys(props));
  // `.describe()` texts of another object with these keys (`plant.arm` overrides `arm`'s fields).
  for (const [k, t] of d.described.get(keyset(props)) ?? []) if (!docs.has(k)) docs.set(k, t);
  const inner: Section[] = [];
  out.push(sec.heading, '');
  if (sec.doc) out.push(sec.doc, '');
  out.push('| Field | Type | Default | Allowed | Meaning |', '| --- | --- | --- | --- | --- |');
  for (const [key, p] of Object.entries(props)) {
    const { text, def } = splitDefault(docs.get(key) ?? p.description);
    const required = sec.schema.required?.includes(key);
    const dflt =
      p.default !== undefined ? `\`${JSON.stringify(p.default)}\`` : def !== undefined ? def : required ? '(required)' : '(none)';
    const nested = objectsIn(p, `${sec.prefix}${key}`);
    const see = nested.length ? ` See ${nested.map((n) => `\`${n.path}\``).join(', ')}.` : '';
    out.push(`| \`${key}\` | ${cell(typeOf(p))} | ${cell(dflt)} | ${cell(allowedOf(p))} | ${cell(text)}${see} |`);
    const own = (path: string): boolean => !path.endsWith(')') && !path.endsWith('[]');
    for (const n of nested)
      inner.push({
        heading: `${sec.heading.split(' ')[0]} \`${n.path}\``,
        schema: n.schema,
        doc: own(n.path) ? text : '',
        prefix: `${n.path}.`,
      });
  }
  out.push('');
  return inner;
}

/** The tables of a JSON Schema's objects, the top one first and each followed by those inside it. */
export function schemaTables(top: Section, json: Json, objects: readonly DocObject[], out: string[]): void {
  const d: Docs = { objects, described: describedIn(json) };
  const walk = (s: Section): void => table(s, d, out).forEach(walk);
  walk(top);
}

/** docs/reference/rig-file.md. */
export function rigFileReference(): string {
  const json = jsonOf(rigFileSchema);
  // `arm` is one-link or two-link, chosen by its keys (a transform that JSON Schema cannot show): the two-link form.
  json.properties!.arm = jsonOf(twoLinkSchema);
  const files = ['rig.ts', 'wiring.ts', 'driver-schema.ts', 'measured-schema.ts'].map((f) => join(ROOT, 'src', 'config', f));
  const objects = docObjects(files);
  const out = [
    '# The rig file',
    '',
    '<!-- Generated from the zod schema in src/config/rig.ts (and wiring.ts, driver-schema.ts, measured-schema.ts)',
    '     by tests/helpers/reference/rig-file.ts: do not edit by hand; `npm run docs:reference` rewrites it. -->',
    '',
    'A rig file (`rigs/*.json`) describes one arm. Only `arm` is required; every other section has defaults.',
    'Unknown keys are errors, and every error names the file and the field (`rigs/x.json: arm.m1: must be > 0 (got -1)`).',
    'A value also has to be plausible with the others (src/config/plausible.ts: can the motor hold the arm?).',
    '"Per joint" lists have one entry per joint: 1 for a one-link arm, 2 for a two-link arm.',
    '',
  ];
  schemaTables({ heading: '## Top level', schema: json, doc: '', prefix: '' }, json, objects, out);
  return `${out.join('\n').trimEnd()}\n`;
}
