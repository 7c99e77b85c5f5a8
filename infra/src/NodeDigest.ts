/**
 * The core's `Digest` port on `node:crypto`: synchronous, with no trip through WebCrypto's promise, which
 * matters on the per-request path (key hashes and ETags).
 */
import { createHash } from "node:crypto"
import { Effect, Layer } from "effect"
import * as Digest from "effect/crypto/Digest"

const nodeName = (a: Digest.Algorithm): string => a.name.replace("-", "").toLowerCase()

export const layerNodeDigest: Layer.Layer<Digest.Digest> = Layer.succeed(Digest.Digest)({
  digest: (algorithm, data) => Effect.sync(() => new Uint8Array(createHash(nodeName(algorithm)).update(data).digest())),
  digestHex: (algorithm, data) => Effect.sync(() => createHash(nodeName(algorithm)).update(data).digest("hex"))
})
