// The failure converter of every client and worker (data-converter.ts): failure messages and
// stack traces move into an encoded payload, so the payload codec encrypts them too. CommonJS
// because the SDK require()s it by path outside the workflow sandbox (under tsx, vitest and
// plain node alike) and the workflow bundler bundles it inside.
'use strict';
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
