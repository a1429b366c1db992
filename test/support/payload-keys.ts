// Test support: the payload keys of the tests. In-process clients and workers use the same
// settings as every process the tests spawn (which inherit no PAYLOAD_* variable, so they use the
// development ring); the recorded histories are written with the committed TEST-ONLY key.
import { fileURLToPath } from 'node:url';
import { dataConverterFor } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings, type PayloadEncryptionSettings } from '../../src/platform/temporal/payload-encryption/settings.js';

/** A key committed to the repository for the recorded histories: public, never for real data. */
export const TEST_ONLY_KEY_FILE = fileURLToPath(new URL('../fixtures/keys/TEST-ONLY-payload-keys.json', import.meta.url));

/** What an unconfigured development process (and so every spawned test process) encrypts with. */
export const developmentEncryption = (): PayloadEncryptionSettings => loadPayloadEncryptionSettings({});

/** The recorded histories' keys. */
export const testOnlyEncryption = (): PayloadEncryptionSettings => loadPayloadEncryptionSettings({ PAYLOAD_KEYS_FILE: TEST_ONLY_KEY_FILE });

export const developmentDataConverter = () => dataConverterFor(developmentEncryption());
