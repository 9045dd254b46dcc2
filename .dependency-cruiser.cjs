// The layer rules of DEVELOPERS.md ("Layout"), checked by `npm run check:deps` (part of `npm test`).
// Layers, bottom up: util < config < bank < libraries (src/lib/*) < stages (src/stages/*), import, eval
// < daemon, worker, review, demo < commands < cli. A folder imports only folders below it (and the libraries only the
// libraries below them, listed in LIB_USES); a library, a stage or the bank is entered only through its index.ts.
const LIBS = ['captions', 'extraction', 'sift', 'image-index', 'geometry', 'comparability'];
/** Which other libraries each library may import (a DAG: no cycles between folders). */
const LIB_USES = {
  captions: [],
  geometry: [],
  sift: [],
  extraction: ['captions'],
  comparability: ['captions'],
  'image-index': ['sift', 'geometry'],
};
const STAGES = ['crawl', 'features', 'match', 'pair', 'export'];
const UPPER = '^src/(stages|import|eval|daemon|worker|review|demo|commands|cli\\.ts)';

const entered = (folder) => ({
  name: `enter-${folder.replace(/^src\//, '').replace('/', '-')}-by-index`,
  comment: `${folder} is used through its index.ts only (what others need of it is exported there on purpose)`,
  severity: 'error',
  from: { path: '^(src|bench|dev)/', pathNot: `^${folder}/` },
  to: { path: `^${folder}/`, pathNot: [`^${folder}/index\\.ts$`, '^src/bank/migrations/'] },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'no import cycle (type imports included; a lazy import() back to a module that loads it on demand is not one)', severity: 'error', from: { path: '^src/' }, to: { circular: true, viaOnly: { dependencyTypesNot: ['dynamic-import'] } } },
    { name: 'util-is-the-floor', severity: 'error', from: { path: '^src/util/' }, to: { path: '^src/(?!util/)' } },
    { name: 'config-above-util-only', severity: 'error', from: { path: '^src/config/' }, to: { path: '^src/(?!util/|config/)' } },
    { name: 'bank-imports-nothing-above', comment: 'the bank is the base layer: util and config only', severity: 'error', from: { path: '^src/bank/' }, to: { path: '^src/(?!util/|config/|bank/)' } },
    { name: 'libraries-below-stages', comment: 'a library never uses a stage or anything above', severity: 'error', from: { path: '^src/lib/' }, to: { path: UPPER } },
    ...LIBS.map((lib) => ({
      name: `lib-${lib}-uses-only-${LIB_USES[lib].join('-') || 'no-library'}`,
      severity: 'error',
      from: { path: `^src/lib/${lib}/` },
      to: { path: `^src/lib/(?!${[lib, ...LIB_USES[lib]].join('/|')}/)` },
    })),
    { name: 'stages-below-commands', comment: 'a stage never uses the daemon, workers, review page, demo or commands', severity: 'error', from: { path: '^src/stages/' }, to: { path: '^src/(daemon|worker|review|demo|commands|cli\\.ts|eval)' } },
    {
      name: 'stage-to-stage-through-registry',
      comment: 'a stage does not import another stage: the registry (src/stages/index.ts) runs them in order',
      severity: 'error',
      from: { path: '^src/stages/([^/]+)/' },
      to: { path: '^src/stages/[^/]+/', pathNot: '^src/stages/$1/' },
    },
    ...LIBS.map((lib) => entered(`src/lib/${lib}`)),
    ...STAGES.map((stage) => entered(`src/stages/${stage}`)),
    entered('src/bank'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
