import * as crypto from 'node:crypto';

/** A new key pair: `pk_…` (24 random bytes) and `sk_…` (32 random bytes), in base64url. */
export function newKeyPair(): { publicKey: string; secretKey: string } {
  return {
    publicKey: 'pk_' + crypto.randomBytes(24).toString('base64url'),
    secretKey: 'sk_' + crypto.randomBytes(32).toString('base64url'),
  };
}
