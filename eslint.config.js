// Lint rules that catch real defects (floating promises, unused code, focused or skipped tests) and hold the
// rules of the house for src/ (eslint.rules.js): the layer order, no code in strings, no Node internals.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layerRules, sourceRules } from './eslint.rules.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bin/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      // The project service finds tsconfig.json (the whole repository as one project) as the editor's TypeScript does.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only' }, { object: 'it', property: 'skip' },
        { object: 'describe', property: 'only' }, { object: 'describe', property: 'skip' },
        { object: 'test', property: 'only' }, { object: 'test', property: 'skip' },
      ],
    },
  },
  ...layerRules(),
  ...sourceRules(),
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
