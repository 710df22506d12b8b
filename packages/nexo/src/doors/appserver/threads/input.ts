/**
 * A turn's input parts → what the model is sent. Text stays text; a slash command becomes its raw
 * text; a skill or file reference becomes a line naming it (the model opens files with its tools);
 * a local image is attached as an image when its bytes are a PNG, JPEG, GIF or WebP of at most
 * 5 MiB (engine/image-input.ts; the client's mimeType is not trusted), and named otherwise; a
 * remote image is named by its URL.
 */
import { isAbsolute, resolve } from "node:path";
import type { InputPart } from "@nexo/wire/schemas/appserver";
import { imageBlockOfFile } from "../../../engine/image-input.js";
import type { ContentBlock } from "../../../engine/types.js";

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
      const image = await imageBlockOfFile(path);
      if (image !== undefined) {
        images.push(image);
        continue;
      }
    }
    const text = partText(part);
    if (text) lines.push(text);
  }
  return [{ type: "text", text: lines.join("\n") }, ...images];
}
