/** The AES-GCM payload codec: round trip, key rotation, tampering and wrong keys fail clearly. */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmCodec, ENCRYPTED_ENCODING, parseKey, payloadCodecsFromEnv } from '../../../src/infra/codec';

const newKey = () => parseKey(randomBytes(32).toString('base64'));
const payload = (value: unknown) => defaultPayloadConverter.toPayload(value)!;

describe('AesGcmCodec', () => {
  it('encrypts every payload and decodes it back unchanged', async () => {
    const codec = new AesGcmCodec(newKey());
    const original = [payload({ text: 'hello, secret world' }), payload('second'), payload(null)];
    const encoded = await codec.encode(original);
    for (const p of encoded) {
      expect(Buffer.from(p.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(p.data!).toString('latin1')).not.toContain('secret');
    }
    // A fresh IV each time: the same payload encrypts differently.
    const again = await codec.encode(original);
    expect(Buffer.from(again[0]!.data!).equals(Buffer.from(encoded[0]!.data!))).toBe(false);
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { text: 'hello, secret world' },
      'second',
      null,
    ]);
  });

  it('passes unencrypted payloads through (histories from before the key)', async () => {
    const codec = new AesGcmCodec(newKey());
    const plain = payload('old');
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('reads payloads of an older key after rotation, and names a missing key', async () => {
    const oldKey = newKey();
    const written = await new AesGcmCodec(oldKey).encode([payload('from before')]);
    const rotated = new AesGcmCodec(newKey(), [oldKey]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode(written))[0]!)).toBe('from before');
    await expect(new AesGcmCodec(newKey()).decode(written)).rejects.toThrow(
      new RegExp(`encrypted with key ${oldKey.id}, which this process does not have`),
    );
  });

  it('refuses altered ciphertext', async () => {
    const codec = new AesGcmCodec(newKey());
    const [sealed] = await codec.encode([payload('integrity')]);
    const data = Buffer.from(sealed!.data!);
    data[20] = data[20]! ^ 0xff;
    await expect(codec.decode([{ ...sealed!, data }])).rejects.toThrow(/failed authentication/);
    await expect(codec.decode([{ ...sealed!, data: data.subarray(0, 10) }])).rejects.toThrow(/too short/);
  });

  it('reads its keys from the environment, with clear errors', () => {
    expect(payloadCodecsFromEnv({})).toEqual([]);
    expect(payloadCodecsFromEnv({ DC_PAYLOAD_KEY: randomBytes(32).toString('base64') })).toHaveLength(1);
    expect(() => payloadCodecsFromEnv({ DC_PAYLOAD_KEY: 'c2hvcnQ=' })).toThrow(
      /DC_PAYLOAD_KEY must be 32 bytes in base64 \(got 5 bytes\)/,
    );
    expect(() =>
      payloadCodecsFromEnv({
        DC_PAYLOAD_KEY: randomBytes(32).toString('base64'),
        DC_PAYLOAD_OLD_KEYS: 'AAAA',
      }),
    ).toThrow(/DC_PAYLOAD_OLD_KEYS must be 32 bytes/);
  });
});
