// One linter for the whole tree (formatting is prettier's: `npm run lint` runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Generated code: src/gen/ (buf generate), src/client/schema.gen.ts (npm run gen:client).
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', 'src/gen/', 'src/client/schema.gen.ts', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        Headers: 'readonly',
        Response: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_' },
      ],
      // Casts at the edges of untyped libraries (uWS, nats) are deliberate and commented.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  // One job per file: a file past 600 lines has grown a second one (generated code is ignored above).
  { rules: { 'max-lines': ['error', { max: 600, skipBlankLines: false, skipComments: false }] } },
  // A folder's entry file only hands names on: a curated list of re-exports (as nats.js's mod.ts), no
  // implementation, no `export *`. Files inside the folder import their siblings (dependency-cruiser).
  {
    files: ['src/*/index.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'Program > :not(ExportNamedDeclaration[source])',
          message:
            "An entry file only hands names on: `export { name } from './file.js'` (or `export type { ... }`); move the code into a file named for its job.",
        },
      ],
    },
  },
  // The API client is bundled for the browser console too: web APIs only (no `node:` modules) and
  // nothing else of src/ (dependency-cruiser checks the folder rules; this keeps it self-contained).
  {
    files: ['src/client/**/*.ts'],
    ignores: ['src/client/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'src/client runs in a browser too: use web APIs (fetch, ReadableStream, AbortSignal), not Node modules.' },
            { group: ['../*'], message: 'src/client imports nothing else of src/ (it is bundled on its own for the browser console).' },
          ],
        },
      ],
    },
  },
  // The browser console (src/console, bundled by scripts/build-console.mjs): browser APIs only, and
  // of src/ only the API client's entry (it talks to the service through the public API alone).
  {
    files: ['src/console/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'src/console runs in a browser: use web APIs, not Node modules.' },
            {
              group: ['../*', '!../client', '!../client/index.js'],
              message: 'src/console imports only the API client (../client/index.js) of src/: it talks to the service through the public API.',
            },
          ],
        },
      ],
    },
  },
  // CommonJS configuration files (.dependency-cruiser.cjs).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
);
