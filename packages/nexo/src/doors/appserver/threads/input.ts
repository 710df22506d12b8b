/**
 * A turn's input parts → what the model is sent. Text stays text; a slash command becomes its raw
 * text; a skill or file reference becomes a line naming it (the model opens files with its tools);
 * a local image is attached as an image when it is a PNG, JPEG, GIF or WebP of at most 5 MiB, and
 * named otherwise; a remote image is named by its URL.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, isAbsolute, resolve } from "node:path";
import type { InputPart } from "@nexo/wire/schemas/appserver";
import type { ContentBlock } from "../../../engine/types.js";

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The text a user typed, as shown back in the thread (images and references named inline). */
export function displayText(parts: readonly InputPart[]): string {
  return parts.map(partText).filter(Boolean).join("\n");
}

function partText(part: InputPart): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "commandRef":
      return part.rawText ?? `/${part.name.replace(/^\//, "")}${part.argsText ? ` ${part.argsText}` : ""}`;
    case "skillRef":
      return `[skill: ${part.name}]`;
    case "fileRef":
      return `[file: ${part.path}]`;
    case "image":
      return `[image: ${part.url}]`;
    case "localImage":
      return `[image: ${part.path}]`;
  }
}

/** The content blocks of the user message the model receives. */
export async function materialize(parts: readonly InputPart[], workspace: string): Promise<ContentBlock[]> {
  const lines: string[] = [];
  const images: ContentBlock[] = [];
  for (const part of parts) {
    if (part.type === "localImage") {
      const path = isAbsolute(part.path) ? part.path : resolve(workspace, part.path);
      const mediaType = part.mimeType ?? IMAGE_TYPES[extname(path).toLowerCase()];
      const info = await stat(path).catch(() => undefined);
      if (mediaType?.startsWith("image/") && info?.isFile() && info.size <= MAX_IMAGE_BYTES) {
        images.push({ type: "image", mediaType, data: (await readFile(path)).toString("base64") });
        continue;
      }
    }
    const text = partText(part);
    if (text) lines.push(text);
  }
  return [{ type: "text", text: lines.join("\n") }, ...images];
}
