// @ts-check
/**
 * Saga changes ship as a new worker build under Worker Deployment Versioning (docs/deploying.md):
 * a run finishes on the build that started it, so the code needs no branch for older runs. A
 * `patched()` or `deprecatePatch()` call is allowed only where versioning cannot serve (a
 * workflow that must move to the new code while it runs, say), and then a comment right above the
 * call's statement says why:
 *
 *   // versioning-cannot-serve: <why, in a sentence>
 */
const MARKER = /versioning-cannot-serve:\s*(\S.{15,})/;
const PATCH_APIS = new Set(['patched', 'deprecatePatch']);

/** @param {import('estree').Node} callee */
function calledName(callee) {
  if (callee.type === 'Identifier') return callee.name;
  if (callee.type === 'MemberExpression' && callee.property.type === 'Identifier') return callee.property.name;
  return null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const patchNeedsReason = {
  meta: {
    type: 'problem',
    docs: { description: 'a patched() or deprecatePatch() call needs a comment saying why Worker Deployment Versioning cannot serve' },
    schema: [],
    messages: {
      unexplained:
        '{{name}}() branches the saga for older runs; ship the change as a new worker build instead (docs/deploying.md). ' +
        'If versioning cannot serve this change, say why right above the statement: // versioning-cannot-serve: <why>',
    },
  },
  create(context) {
    const source = context.sourceCode;
    return {
      CallExpression(node) {
        const name = calledName(node.callee);
        if (name === null || !PATCH_APIS.has(name)) return;
        // The comments above the statement (or declaration) the call is part of, and on its line.
        /** @type {import('estree').Node} */
        let statement = node;
        for (const ancestor of [...source.getAncestors(node)].reverse()) {
          statement = ancestor;
          if (/Statement$|Declaration$/.test(ancestor.type)) break;
        }
        const comments = [...source.getCommentsBefore(statement), ...source.getCommentsInside(statement)];
        if (comments.some((comment) => MARKER.test(comment.value))) return;
        context.report({ node, messageId: 'unexplained', data: { name } });
      },
    };
  },
};

export default { rules: { 'patch-needs-reason': patchNeedsReason } };
