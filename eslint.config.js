// ESLint's flat configuration: TypeScript's recommended rules; formatting is Prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // web/src/lib/api.gen.d.ts is generated from the OpenAPI document (scripts/openapi-types.ts).
  { ignores: ['dist/', 'data/', 'node_modules/', 'web/src/lib/api.gen.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        NodeJS: 'readonly',
      },
    },
    rules: {
      // A variable its own callbacks read before it is assigned (a server and its handlers) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  // The console's TypeScript runs in the browser: its globals (document, fetch, sessionStorage…) are
  // checked by the compiler (svelte-check), which knows the DOM; ESLint's own list does not. Its
  // .svelte files are type-checked by svelte-check and formatted by Prettier's Svelte plugin.
  { files: ['web/**/*.ts'], rules: { 'no-undef': 'off' } },
  // Tests read JSON bodies of many shapes, and migrations and the dialect helpers take `Kysely<any>`
  // (they work on any table, or must not depend on today's table types): `any` there is the honest type.
  {
    files: [
      'test/**/*.ts',
      'bench/**/*.ts',
      'src/db/migrations/*.ts',
      'src/db/dialect.ts',
      'src/http/list-source.ts',
      'src/db/soft-delete.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
