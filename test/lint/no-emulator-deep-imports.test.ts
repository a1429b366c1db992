/**
 * The lint rules that keep the Stripe emulator's inside private and out of production code
 * (eslint.config.js): ESLint's Node API lints a fixture that deep-imports the package (by package
 * path, by relative path into packages/stripe-emulator/src, as a re-export and as `import()`) and
 * must report each, while the import of the public index passes; and the public index itself is
 * refused in production code under src/ but allowed in the development tools.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = path.join(ROOT, 'test/fixtures/lint/emulator-deep-import.ts');
const DEEP = 'Import the Stripe emulator only through its public index: @order-payments/stripe-emulator.';

function eslint(): ESLint {
  return new ESLint({
    cwd: ROOT,
    // test/fixtures is in the config's ignores so that `eslint .` skips the fixture; lint it anyway.
    ignore: false,
    // The fixture and the pretend files are in no tsconfig, so lint them untyped: the import rules need no types.
    overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
  });
}

const brief = (messages: readonly { ruleId: string | null; line: number; severity: number; message: string }[]) =>
  messages.map(({ ruleId, line, severity, message }) => ({ ruleId, line, severity, message }));

describe('no deep imports into @order-payments/stripe-emulator', () => {
  it('reports the package-path, relative, re-exported and dynamic deep imports, and only those', async () => {
    const [result] = await eslint().lintFiles([FIXTURE]);
    expect(brief(result?.messages ?? [])).toEqual([
      { ruleId: 'no-restricted-imports', line: 4, severity: 2, message: expect.stringContaining(DEEP) as unknown },
      { ruleId: 'no-restricted-imports', line: 5, severity: 2, message: expect.stringContaining(DEEP) as unknown },
      { ruleId: 'no-restricted-imports', line: 6, severity: 2, message: expect.stringContaining(DEEP) as unknown },
      { ruleId: 'no-restricted-syntax', line: 7, severity: 2, message: expect.stringContaining(DEEP) as unknown },
    ]);
  });
});

describe('the emulator in production code', () => {
  const source = "import { startStripeEmulator } from '@order-payments/stripe-emulator';\nexport const start = startStripeEmulator;\n";

  it('is refused under src/ outside the development tools', async () => {
    for (const file of ['src/worker-fixture.ts', 'src/api/fixture.ts', 'src/money/stripe/fixture.ts']) {
      const [result] = await eslint().lintText(source, { filePath: path.join(ROOT, file) });
      expect(brief(result?.messages ?? []), file).toEqual([
        {
          ruleId: 'no-restricted-syntax',
          line: 1,
          severity: 2,
          message: 'The Stripe emulator is dev-only: production code under src/ (compiled to dist/, run on plain node) must not import it.',
        },
      ]);
    }
  });

  it('is allowed in the development tools, tests, bench and scripts', async () => {
    for (const file of ['src/stack.ts', 'src/operations/chaos/fixture.ts', 'test/support/fixture.ts', 'bench/fixture.ts', 'scripts/fixture.ts']) {
      const [result] = await eslint().lintText(source, { filePath: path.join(ROOT, file) });
      expect(brief(result?.messages ?? []), file).toEqual([]);
    }
  });
});
