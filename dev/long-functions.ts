// Lists the functions of src/ longer than a limit (default 120 lines: issue 32's "a function a reader can hold"),
// longest first, and exits 1 when there is any. A function's length is its whole span, the closures it defines
// included: a long function does not get short by holding its steps as nested closures over shared variables (make
// them small named functions or objects instead). `npm run check:functions`; `--limit N`, `--list` (print every
// function over N without failing).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
const limit = Number(args[args.indexOf('--limit') + 1] ?? NaN) || 120;
const listOnly = args.includes('--list');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

interface Found { file: string; name: string; line: number; lines: number }

function nameOf(node: ts.Node): string {
  const n = (node as ts.FunctionLikeDeclaration).name;
  if (n && ts.isIdentifier(n)) return n.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

function measure(file: string): Found[] {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const out: Found[] = [];
  // own lines = span minus the spans of directly nested functions
  const visit = (node: ts.Node): number[] => {
    const nested: number[] = [];
    const walk = (n: ts.Node) => {
      if (ts.isFunctionLike(n) && (n as ts.FunctionLikeDeclaration).body) nested.push(...visitFn(n));
      else ts.forEachChild(n, walk);
    };
    ts.forEachChild(node, walk);
    return nested;
  };
  const visitFn = (fn: ts.Node): number[] => {
    const span = lineOf(fn.getEnd()) - lineOf(fn.getStart(sf)) + 1;
    const inner = visit(fn);
    void inner;
    out.push({ file, name: nameOf(fn), line: lineOf(fn.getStart(sf)) + 1, lines: span });
    return [span];
  };
  visit(sf);
  return out;
}

const found = files('src').flatMap(measure).filter((f) => f.lines > limit).sort((a, b) => b.lines - a.lines);
for (const f of found) process.stdout.write(`${f.file}:${f.line}  ${f.name}  ${f.lines} lines\n`);
if (found.length) process.stderr.write(`${found.length} function(s) over ${limit} lines in src/\n`);
if (!found.length) process.stdout.write(`no function over ${limit} lines in src/\n`);
process.exit(found.length && !listOnly ? 1 : 0);
