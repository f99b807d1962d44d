// The doc comments of a zod schema's fields and of an interface's members, read from the source with
// TypeScript's parser: zod keeps `.describe()` texts, not comments, and most of twolink's schemas say
// what a field means in a `/** ... */` above it. docs/reference/ is generated from both.
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/** One object's documented keys: a `z.*Object({...})` literal or an interface. */
export interface DocObject {
  /** The declaration's name when it has one (`const limitSchema = ...`, `interface RunSummary`). */
  name?: string;
  keys: string[];
  docs: Map<string, string>;
}

/** The text of the `/** ... *\/` comment right above a node, as one paragraph (undefined if none). */
export function docOf(node: ts.Node, text: string): string | undefined {
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const last = ranges.at(-1);
  if (!last) return undefined;
  const raw = text.slice(last.pos, last.end);
  if (!raw.startsWith('/**')) return undefined;
  return raw
    .slice(3, -2)
    .split('\n')
    .map((l) => l.replace(/^\s*\*\s?/, '').trim())
    .filter((l) => l !== '')
    .join(' ')
    .trim();
}

function propertyName(p: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(p) || ts.isStringLiteral(p) || ts.isNumericLiteral(p)) return p.text;
  return undefined;
}

/** The name a node is declared under (its variable, property or interface), if any. */
function declaredName(node: ts.Node): string | undefined {
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name)) return n.name.text;
    if (ts.isPropertyAssignment(n)) return propertyName(n.name);
    if (ts.isInterfaceDeclaration(n)) return n.name.text;
  }
  return undefined;
}

/** Every object literal given to `z.object`, `z.strictObject` or `z.looseObject`, and every interface, of `files`. */
export function docObjects(files: readonly string[]): DocObject[] {
  const out: DocObject[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        /^(object|strictObject|looseObject)$/.test(node.expression.name.text)
      ) {
        const arg = node.arguments[0];
        if (arg && ts.isObjectLiteralExpression(arg)) out.push(fromMembers(arg.properties, text, declaredName(node)));
      }
      if (ts.isInterfaceDeclaration(node)) out.push(fromMembers(node.members, text, node.name.text));
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

function fromMembers(members: ts.NodeArray<ts.Node>, text: string, name: string | undefined): DocObject {
  const keys: string[] = [];
  const docs = new Map<string, string>();
  for (const m of members) {
    const n = (m as { name?: ts.PropertyName }).name;
    const key = n ? propertyName(n) : undefined;
    if (key === undefined) continue;
    keys.push(key);
    const d = docOf(m, text);
    if (d) docs.set(key, d);
  }
  return { ...(name ? { name } : {}), keys, docs };
}

/**
 * The docs of the object whose keys are `keys`: those of every declared object with exactly these keys
 * first (a schema and a copy of it), then of those with more keys (`plant.motors[]` overrides some of
 * `motors[]`'s fields and says no more of them), the first one's winning.
 */
export function docsFor(objects: readonly DocObject[], keys: readonly string[]): Map<string, string> {
  const want = [...keys].sort().join(',');
  const docs = new Map<string, string>();
  const same = objects.filter((o) => [...o.keys].sort().join(',') === want);
  const wider = objects.filter((o) => o.keys.length > keys.length && keys.every((k) => o.keys.includes(k)));
  for (const o of [...same, ...wider]) for (const [k, v] of o.docs) if (keys.includes(k) && !docs.has(k)) docs.set(k, v);
  return docs;
}

/** A doc comment split into its text and its `@default` tag. */
export function splitDefault(doc: string | undefined): { text: string; def?: string } {
  if (!doc) return { text: '' };
  const m = /\s*@default\s+(.*)$/.exec(doc);
  return m ? { text: doc.slice(0, m.index).trim(), def: m[1]!.trim() } : { text: doc };
}

/** One member of an interface: its name, its type as written, whether it is optional, its doc. */
export interface Member {
  key: string;
  type: string;
  optional: boolean;
  doc: string;
}

/** The members of `interface name` in `file`, in their order. */
export function interfaceMembers(file: string, name: string): Member[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const decl = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
  if (!decl) throw new Error(`${file}: no interface ${name}`);
  return decl.members.filter(ts.isPropertySignature).map((m) => ({
    key: propertyName(m.name) ?? m.name.getText(sf),
    type: m.type ? m.type.getText(sf).replace(/\s+/g, ' ').replace(/; }/g, ' }') : 'unknown',
    optional: m.questionToken !== undefined,
    doc: docOf(m, text) ?? '',
  }));
}
