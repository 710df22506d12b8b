/**
 * The pictures of an inbound channel message, for the model to see. A channel plugin downloads
 * what a person sent into its own state directory and names the files in its payload
 * (`attachments[].path`); the router reads them here — the one place where a path a plugin gave
 * is opened by the daemon.
 *
 * The rule: a file is read only when its real path lies inside the state directory of a local
 * plugin that serves the message's channel, found by the same descriptor walk as the file tools
 * (engine/tools/confine.ts), so neither `..`, a symlink, nor a directory swapped in between the
 * check and the read can make the daemon read /etc/shadow, another plugin's files or the store for
 * a plugin (the plugin could otherwise launder any file the daemon can read into the model's
 * context, and from there into a reply). Only PNG, JPEG, GIF and WebP of at most 5 MiB become
 * image blocks (engine/image-input.ts); other files, and refused ones, stay what the message's
 * text already says they are: named files.
 */
import { imageBlockOf, MAX_INPUT_IMAGE_BYTES } from "../../engine/image-input.js";
import { locateInWorkspace, PathEscapeError, readLocatedFile } from "../../engine/tools/confine.js";
import type { ImageBlock } from "../../engine/types.js";
import type { InboundAttachment } from "./inbound.js";

/** Pictures beyond this many on one message are left named in its text. */
export const MAX_IMAGES_PER_MESSAGE = 8;

export interface AttachmentProblem {
  path: string;
  reason: "outside_plugin_state" | "no_local_plugin" | "unreadable";
  detail?: string;
}

/**
 * The image blocks of `attachments`, read from inside `roots` (the state directories of the local
 * plugins serving the channel). A file that is not a picture is skipped quietly; one that may not
 * or cannot be read is reported to `problem` and skipped. Never throws.
 */
export async function inboundImages(
  attachments: readonly InboundAttachment[],
  roots: readonly string[],
  problem: (p: AttachmentProblem) => void,
): Promise<ImageBlock[]> {
  const images: ImageBlock[] = [];
  for (const attachment of attachments) {
    if (images.length === MAX_IMAGES_PER_MESSAGE) break;
    if (attachment.kind !== undefined && attachment.kind !== "image") continue;
    if (roots.length === 0) {
      problem({ path: attachment.path, reason: "no_local_plugin" });
      continue;
    }
    const bytes = await readInside(roots, attachment.path, problem);
    const image = bytes === undefined ? undefined : imageBlockOf(bytes);
    if (image !== undefined) images.push(image);
  }
  return images;
}

/** The file's bytes when it lies inside one of `roots` and is small enough; undefined otherwise. */
async function readInside(
  roots: readonly string[],
  path: string,
  problem: (p: AttachmentProblem) => void,
): Promise<Buffer | undefined> {
  let refused: AttachmentProblem | undefined;
  for (const root of roots) {
    let location: Awaited<ReturnType<typeof locateInWorkspace>> | undefined;
    try {
      location = await locateInWorkspace(root, path);
      return await readLocatedFile(location, path, MAX_INPUT_IMAGE_BYTES);
    } catch (error) {
      refused =
        error instanceof PathEscapeError
          ? { path, reason: "outside_plugin_state" }
          : { path, reason: "unreadable", detail: (error as Error).message };
      // Inside this root but unreadable: no other root can hold the same real file.
      if (!(error instanceof PathEscapeError)) break;
    } finally {
      await location?.release();
    }
  }
  if (refused !== undefined) problem(refused);
  return undefined;
}
