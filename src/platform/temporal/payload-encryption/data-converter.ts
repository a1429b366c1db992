// The one data converter of every Temporal client and worker in the project: the encryption
// codec over the default payload converter, and a failure converter that moves failure messages
// and stack traces into an encoded (so encrypted) payload.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter, LoadedDataConverter, ProtoFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { EncryptionCodec } from './encryption-codec.js';
import type { PayloadEncryptionSettings } from './settings.js';

/**
 * The failure converter's module: plain CommonJS (see the file), the same file under src/ and
 * dist/ (npm run build copies it), since the SDK require()s it by path.
 */
export const FAILURE_CONVERTER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'failure-converter.cjs');

export function encryptionCodecFor(settings: PayloadEncryptionSettings): EncryptionCodec {
  return new EncryptionCodec(settings.keys);
}

/**
 * For `new Client({ dataConverter })`, `Worker.create({ dataConverter })` and the replayer alike.
 * A workflow bundle made ahead of time must be made with FAILURE_CONVERTER_PATH too (bundle-workflows.ts).
 */
export function dataConverterFor(settings: PayloadEncryptionSettings): DataConverter {
  return { payloadCodecs: [encryptionCodecFor(settings)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/**
 * A stored failure's message as a person should read it: with encoded common attributes the
 * history's own `message` is only "Encoded failure", so the client's converter opens it.
 */
export async function failureMessage(converter: LoadedDataConverter, failure: ProtoFailure | null | undefined): Promise<string | undefined> {
  if (!failure) return undefined;
  const error = await decodeOptionalFailureToOptionalError(converter, failure);
  return error?.message;
}
