/**
 * Telling text, images and other binary files apart by their bytes, not their names.
 */

/** How many leading bytes are inspected, as git does for its own binary heuristic. */
export const SNIFF_BYTES = 8000;

/** A NUL byte in the first 8000 bytes means binary; text encodings the tools handle never contain one. */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, SNIFF_BYTES);
  for (let index = 0; index < end; index++) if (bytes[index] === 0) return true;
  return false;
}

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The media type of a PNG, JPEG, GIF or WebP file from its signature, else `undefined`. */
export function sniffImage(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (signature: readonly number[], offset = 0): boolean =>
    bytes.length >= offset + signature.length &&
    signature.every((byte, index) => bytes[offset + index] === byte);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts([0x47, 0x49, 0x46, 0x38])) return "image/gif"; // "GIF8"
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"; // RIFF....WEBP
  return undefined;
}
