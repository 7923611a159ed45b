/**
 * Import rules of the layout in DESIGN.md ("Layout"), checked by `npm run depcruise` (part of
 * `npm run lint`, so CI runs it). Rules at severity `error` fail the run; `warn` rules are
 * reported without failing (none are left).
 *
 * Tests (test/ and *.test.ts) may import anything; bench/ and scripts/ are not checked.
 * src/app/ and src/main.ts wire the process and may import every folder.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'kernel-is-a-leaf',
      severity: 'error',
      comment: 'src/kernel imports nothing else from src/ (the generated protobuf enums in src/gen excepted: kernel/proto-enums.ts).',
      from: { path: '^src/kernel/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/kernel/', '^src/gen/'] },
    },
    {
      name: 'bus-and-store-import-only-kernel',
      severity: 'error',
      comment: 'src/bus and src/store import only src/kernel (and their own files).',
      from: { path: '^src/(bus|store)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/$1/', '^src/kernel/'] },
    },
    {
      name: 'nothing-imports-the-edges',
      severity: 'error',
      comment: 'Nothing imports src/gateway or src/rpc except src/app/ and files inside those folders.',
      from: { path: '^src/([^/]+)/', pathNot: ['\\.test\\.ts$', '^src/app/'] },
      to: { path: '^src/(gateway|rpc)/', pathNot: '^src/$1/' },
    },
    {
      name: 'nothing-imports-the-edges-top-level',
      severity: 'error',
      comment: 'Top-level files under src/ (main.ts) do not import src/gateway or src/rpc: src/app/ wires them.',
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: '^src/(gateway|rpc)/' },
    },
    {
      name: 'console-imports-only-the-client',
      severity: 'error',
      comment: 'The browser console (src/console) talks to the service only through the public API: of src/ it imports only the client (src/client/index.ts).',
      from: { path: '^src/console/' },
      to: { path: '^src/', pathNot: ['^src/console/', '^src/client/index\\.ts$'] },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment: 'No cycles between the folders of src/.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles between files either: an ES-module cycle throws at load the day a top-level statement uses a name from it.',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { circular: true },
    },
    {
      name: 'not-through-own-entry',
      severity: 'error',
      comment: "Files inside a folder import their siblings, never their own folder's entry file (index.ts only hands names on).",
      from: { path: '^src/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/$1/index\\.ts$' },
    },
    {
      name: 'entry-only-hands-names-on',
      severity: 'error',
      comment: 'A folder entry file imports only files of its own folder (it re-exports them).',
      from: { path: '^src/([^/]+)/index\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/$1/'] },
    },
    {
      name: 'through-the-entry-file',
      severity: 'error',
      comment: 'Imports of another folder go through its entry file (index.ts), the only thing other folders import.',
      from: { path: '^src/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$', '^src/gen/'] },
    },
    {
      name: 'through-the-entry-file-top-level',
      severity: 'error',
      comment: 'src/main.ts imports folders through their entry files too.',
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/[^/]+/index\\.ts$', '^src/gen/'] },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: '^node_modules/' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
