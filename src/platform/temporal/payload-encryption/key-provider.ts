// Where the payload codec gets its keys: a provider names the key new payloads are sealed with
// and finds the key an existing payload names. The key ring (key-ring.ts) is the provider for
// development and tests; a KMS envelope provider fits the same interface (docs/encryption.md).

/** A 256-bit AES key and the ID written beside every payload sealed with it. */
export interface DataKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
  /**
   * For envelope encryption: the data key wrapped by a key-encryption key (a KMS), written into
   * each payload's metadata so any holder of the KMS permission can unwrap it. Unset for a key ring.
   */
  wrapped?: Uint8Array;
}

export interface PayloadKeyProvider {
  /** The key new payloads are sealed with. */
  encryptionKey(): DataKey | Promise<DataKey>;
  /**
   * The key a payload names; `wrapped` is the payload's wrapped data key, if it carries one.
   * Throws UnknownPayloadKeyError when the key is not (or no longer) available.
   */
  decryptionKey(id: string, wrapped: Uint8Array | undefined): DataKey | Promise<DataKey>;
  /** The IDs this provider can decrypt, for logs and errors; never the keys. */
  describe(): string;
}

/** The payload names a key this process does not hold: nothing is decrypted, nothing falls back to plain text. */
export class UnknownPayloadKeyError extends Error {
  override readonly name = 'UnknownPayloadKeyError';
  constructor(
    readonly keyId: string,
    holds: string,
  ) {
    super(`payload encrypted with key '${keyId}', which this process does not hold (${holds}); add it back to PAYLOAD_KEYS or PAYLOAD_KEYS_FILE until no open run needs it`);
  }
}
