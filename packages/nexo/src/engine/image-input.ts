/**
 * A picture a person attached to their message — a door's upload, a channel's download — as the
 * image block the model sees. One rule for every entry point: at most 5 MiB (what the vendors'
 * APIs take per image) and bytes that are a PNG, JPEG, GIF or WebP, whatever the file is called;
 * anything else stays a file the message names, for the model to open with its tools.
 */
import { readFile, stat } from "node:fs/promises";
import { sniffImage } from "./tools/file-kind.js";
import type { ImageBlock } from "./types.js";

export const MAX_INPUT_IMAGE_BYTES = 5 * 1024 * 1024;

/** The image block of these bytes, or undefined when they are not a PNG, JPEG, GIF or WebP or are too large. */
export function imageBlockOf(bytes: Buffer): ImageBlock | undefined {
  if (bytes.length > MAX_INPUT_IMAGE_BYTES) return undefined;
  const mediaType = sniffImage(bytes);
  return mediaType === undefined ? undefined : { type: "image", mediaType, data: bytes.toString("base64") };
}

/**
 * The image block of a local file the user of a door chose (no confinement: the door's user is
 * the machine's user). Undefined when it is missing, not a regular file, too large or not an image.
 */
export async function imageBlockOfFile(path: string): Promise<ImageBlock | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_INPUT_IMAGE_BYTES) return undefined;
  const bytes = await readFile(path).catch(() => undefined);
  return bytes === undefined ? undefined : imageBlockOf(bytes);
}
