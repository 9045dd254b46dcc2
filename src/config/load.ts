// Loading the configuration: the package's config/default.yaml, then --config FILE, then CAPBRIDGE_* variables.
// Each layer is validated as it is applied, so an error names the file (or variable) that introduced it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { configSchema, type Config } from './schema.js';
import { UserError } from '../util/errors.js';

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_CONFIG_FILE = path.join(PACKAGE_ROOT, 'config', 'default.yaml');

/** Variables with their own meaning that are not config keys. */
const RESERVED_ENV = new Set(['CAPBRIDGE_DATA', 'CAPBRIDGE_CONFIG', 'CAPBRIDGE_TOKEN', 'CAPBRIDGE_LOG_LEVEL']);

type Tree = { [k: string]: unknown };
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

function readYaml(file: string): Tree {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read config file: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new UserError(`${file}: invalid YAML: ${(err as Error).message}`);
  }
  if (doc == null) return {};
  if (!isTree(doc)) throw new UserError(`${file}: the top level must be a mapping of sections`);
  return doc;
}

/** Deep merge: mappings merge key by key, everything else (scalars, lists) replaces. */
export function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isTree(v) && isTree(out[k]) ? deepMerge(out[k] as Tree, v) : v;
  }
  return out;
}

/** Keys that no longer exist, with where their meaning went (an old override file gets told, not just refused). */
const RETIRED_KEYS: Record<string, string> = {
  'comparability.levels': 'replaced by comparability.thresholds (rerun capbridge calibrate, or copy the defaults)',
  'comparability.a': 'replaced by comparability.thresholds',
  'comparability.epsilon': 'replaced by comparability.thresholds',
  'lsh.tables': 'retired: the index has one table with a 64-bit sketch beside each entry (issue 35); remove the key',
  'lsh.probes': 'replaced by lsh.multiprobe (buckets probed per query keypoint in the one table, default 24)',
  'match.views.minPromise': 'replaced by match.views.minVotingKeypoints (the same gate counted in the query\'s keypoints, which do not change with the index\'s vote weights; votes did)',
};

/** Values a key no longer takes, with why and what to use (keyed "key.path=value"). */
const RETIRED_VALUES: Record<string, string> = {
  'match.views.archive.views=unfound': 'removed: it found no more pairs than `none` and adds the views search to archive matching\'s cost for a source without counterpart (issue 33 round 6); use none (the default) or before',
};

/** The value at a key path of a tree (undefined when absent). */
const valueAt = (tree: Tree, keyPath: PropertyKey[]): unknown => keyPath.reduce<unknown>((t, k) => (isTree(t) ? t[String(k)] : undefined), tree);

function validate(tree: Tree, origin: string): Config {
  const res = configSchema.safeParse(tree);
  if (res.success) return res.data;
  const lines = res.error.issues.map((issue) => {
    const keyPath = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => (keyPath ? `${keyPath}.${k}` : k));
      const hints = keys.filter((k) => RETIRED_KEYS[k]).map((k) => ` ("${k}" was ${RETIRED_KEYS[k]})`);
      return `unknown key ${keys.map((k) => `"${k}"`).join(', ')}${hints.join('')}`;
    }
    const retired = issue.code === 'invalid_value' ? RETIRED_VALUES[`${keyPath}=${String(valueAt(tree, issue.path))}`] : undefined;
    return `"${keyPath}": ${issue.message}${retired ? ` ("${String(valueAt(tree, issue.path))}" was ${retired})` : ''}`;
  });
  throw new UserError(`${origin}: invalid configuration: ${lines.join('; ')}`);
}

const snake = (k: string) => k.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Every leaf key path of a tree, e.g. ['sift', 'maxSide']. */
function leafPaths(tree: Tree, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(tree)) {
    if (isTree(v)) out.push(...leafPaths(v, [...prefix, k]));
    else out.push([...prefix, k]);
  }
  return out;
}

export function envNameFor(keyPath: string[]): string {
  return 'CAPBRIDGE_' + keyPath.map(snake).join('__');
}

function envOverrides(defaults: Tree, env: NodeJS.ProcessEnv, warnings: string[] = []): { tree: Tree; names: string[] } {
  const byName = new Map(leafPaths(defaults).map((p) => [envNameFor(p), p]));
  for (const [from, to] of RENAMED) {
    const oldName = envNameFor(from);
    if (env[oldName] === undefined) continue;
    if (env[envNameFor(to)] !== undefined) warnings.push(`environment: ${oldName} is now ${envNameFor(to)}, which is set too: ${oldName} is ignored`);
    else {
      byName.set(oldName, to);
      warnings.push(`environment: ${oldName} is now ${envNameFor(to)} (the old name works until the next release)`);
    }
  }
  const tree: Tree = {};
  const names: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('CAPBRIDGE_') || RESERVED_ENV.has(name) || raw === undefined) continue;
    if (!byName.has(name) && RENAMED.some(([from]) => envNameFor(from) === name)) continue; // ignored, warned above
    const keyPath = byName.get(name);
    if (!keyPath) {
      throw new UserError(`environment: unknown key ${name} (config variables look like ${envNameFor(['sift', 'maxSide'])})`);
    }
    let value: unknown;
    try {
      value = YAML.parse(raw);
    } catch {
      value = raw;
    }
    // A string key given a YAML-looking value (e.g. a cron "*/5 * * * *") keeps the text as written.
    let node: Tree = tree;
    for (const k of keyPath.slice(0, -1)) node = (node[k] = (node[k] as Tree) ?? {}) as Tree;
    node[keyPath[keyPath.length - 1]!] = value === null ? raw : value;
    names.push(name);
  }
  return { tree, names };
}

export interface LoadOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Already-parsed overrides applied last (e.g. from command-line flags). */
  overrides?: Tree;
}

export interface LoadedConfig {
  config: Config;
  files: string[];
  /** Keys that are no longer used, accepted and ignored (logged by the CLI). */
  warnings: string[];
}

/** Keys renamed in this release, kept working for one release with a warning: [old path, new path]. A file or a
 *  variable (CAPBRIDGE_BANK__URL…) that sets an old key sets the new one, unless the new one is set there too. */
export const RENAMED: [string[], string[]][] = [
  [['bank', 'url'], ['database', 'url']],
  [['export', 'minImageScore'], ['match', 'minScore']],
  [['export', 'minInliers'], ['match', 'minInliers']],
];

function getPath(tree: Tree, keyPath: string[]): { node: Tree; last: string } | undefined {
  let node: unknown = tree;
  for (const k of keyPath.slice(0, -1)) node = isTree(node) ? node[k] : undefined;
  return isTree(node) ? { node, last: keyPath[keyPath.length - 1]! } : undefined;
}

function moveRenamed(tree: Tree, origin: string, warnings: string[]): Tree {
  for (const [from, to] of RENAMED) {
    const old = getPath(tree, from);
    if (!old || !(old.last in old.node)) continue;
    const value = old.node[old.last];
    delete old.node[old.last];
    if (Object.keys(old.node).length === 0 && from.length > 1) delete getPath(tree, from.slice(0, -1))?.node[from[from.length - 2]!];
    let node = tree;
    for (const k of to.slice(0, -1)) node = (node[k] = isTree(node[k]) ? node[k] : {}) as Tree;
    const last = to[to.length - 1]!;
    if (last in node) warnings.push(`${origin}: "${from.join('.')}" is now "${to.join('.')}", which is set too: the old key is ignored`);
    else {
      node[last] = value;
      warnings.push(`${origin}: "${from.join('.')}" is now "${to.join('.')}" (the old name works until the next release)`);
    }
  }
  return tree;
}

/** Keys of older releases that are ignored with a warning instead of stopping start-up: [path, what replaced them]. */
const DEPRECATED: [string[], string][] = [
  [['crawler', 'filters'], 'the crawler stores every caption (with its language check); the one-sentence and word-count filters are pairing options now (export.maxSentences, export.maxChineseWords)'],
];

function dropDeprecated(tree: Tree, file: string, warnings: string[]): Tree {
  for (const [keyPath, why] of DEPRECATED) {
    let node: unknown = tree;
    for (const k of keyPath.slice(0, -1)) node = isTree(node) ? node[k] : undefined;
    const last = keyPath[keyPath.length - 1]!;
    if (isTree(node) && last in node) {
      delete node[last];
      warnings.push(`${file}: "${keyPath.join('.')}" is no longer used and is ignored: ${why}`);
    }
  }
  return tree;
}

export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const defaults = readYaml(DEFAULT_CONFIG_FILE);
  validate(defaults, DEFAULT_CONFIG_FILE);
  let tree = defaults;
  const files = [DEFAULT_CONFIG_FILE];
  const warnings: string[] = [];
  const configFile = opts.configFile ?? env.CAPBRIDGE_CONFIG;
  if (configFile) {
    const file = path.resolve(configFile);
    tree = deepMerge(tree, moveRenamed(dropDeprecated(readYaml(file), file, warnings), file, warnings));
    validate(tree, file);
    files.push(file);
  }
  const fromEnv = envOverrides(defaults, env, warnings);
  if (fromEnv.names.length) {
    tree = deepMerge(tree, fromEnv.tree);
    validate(tree, `environment (${fromEnv.names.join(', ')})`);
  }
  if (opts.overrides) tree = deepMerge(tree, opts.overrides);
  return { config: validate(tree, 'command line'), files, warnings };
}

/** Writes a config override file atomically (used by `calibrate`). Keeps other keys of an existing file. */
export function writeConfigFile(file: string, patch: Tree): void {
  const existing = fs.existsSync(file) ? moveRenamed(dropDeprecated(readYaml(file), file, []), file, []) : {};
  const merged = deepMerge(existing, patch);
  validate(deepMerge(readYaml(DEFAULT_CONFIG_FILE), merged), file);
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, YAML.stringify(merged));
  fs.renameSync(tmp, file);
}
