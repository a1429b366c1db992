/**
 * The lint rule that retires patching (eslint-rules/patch-needs-reason.js): a saga change ships as
 * a new worker build, so a call to the SDK's patch API fails lint unless a comment above it says
 * why Worker Deployment Versioning cannot serve.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Spelled apart so that a search of src/ and test/ for the API's calls finds only real ones.
const PATCH = ['patch', 'ed'].join('');

function lint(source: string) {
  const eslint = new ESLint({ cwd: ROOT, overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }] });
  return eslint.lintText(source, { filePath: path.join(ROOT, 'src/workflows/fixture.ts') }).then(([result]) =>
    (result?.messages ?? []).filter((message) => message.ruleId === 'order-payments/patch-needs-reason').map(({ line }) => line),
  );
}

const header = `import { deprecatePatch, ${PATCH} } from '@temporalio/workflow';\nimport * as wf from '@temporalio/workflow';\n`;

describe('order-payments/patch-needs-reason', () => {
  it('fails a bare patch call, a namespaced one, one inside a condition and a deprecatePatch', async () => {
    const source = `${header}export function a() {\n  if (${PATCH}('x')) return 1;\n  const b = wf.${PATCH}('y');\n  deprecatePatch('z');\n  return b;\n}\n`;
    expect(await lint(source)).toEqual([4, 5, 6]);
  });

  it('fails a call whose comment does not give a reason', async () => {
    const source = `${header}// versioning-cannot-serve:\nexport const a = ${PATCH}('x');\n// a note\nexport const b = ${PATCH}('y');\n`;
    expect(await lint(source)).toEqual([4, 6]);
  });

  it('passes a call with a versioning-cannot-serve reason above its statement', async () => {
    const source = `${header}export function a() {\n  // versioning-cannot-serve: this workflow runs for months and must take the fix while it runs\n  if (${PATCH}('x')) return 1;\n  return 0;\n}\n`;
    expect(await lint(source)).toEqual([]);
  });
});
