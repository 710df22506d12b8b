/**
 * Which local files a channel may upload. The path to send comes from a model's reply or a caller,
 * so it is untrusted: without this rule a prompt could make the bot post the daemon's config or
 * keys to a chat. A file is sent only when its real path (symbolic links resolved) lies under one
 * of the operator's media roots; everything else is refused with the reason.
 */
import { realpathSync } from "node:fs";
import { resolve, sep } from "node:path";
import { ChannelUnsupportedError } from "nexo-plugin-sdk";
import type { Attachment } from "./attachment.js";

export class MediaPathRefusedError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "MediaPathRefusedError";
  }
}

export class MediaRoots {
  private readonly roots: string[];

  /** Roots that do not exist (yet) are kept as given and compared literally. */
  constructor(roots: readonly string[]) {
    this.roots = roots.map((root) => {
      try {
        return realpathSync(resolve(root));
      } catch {
        return resolve(root);
      }
    });
  }

  get list(): readonly string[] {
    return this.roots;
  }

  /** The file's real path when it may be sent; throws MediaPathRefusedError otherwise. */
  check(path: string): string {
    let real: string;
    try {
      real = realpathSync(resolve(path));
    } catch (error) {
      throw new MediaPathRefusedError(
        path,
        `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
    const inside = this.roots.some(
      (root) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep),
    );
    if (!inside) {
      throw new MediaPathRefusedError(
        path,
        this.roots.length === 0
          ? "no media directory is configured, so no local file may be sent"
          : `is outside the media directories (${this.roots.join(", ")})`,
      );
    }
    return real;
  }
}

/**
 * The attachments of an outbound message that may be sent: each local file is held to `check`
 * (the operator's media directories); a refused one is left out and reported to `leftOut`, unless
 * it is all the message carries (no text, no other attachment) — then the whole send is refused
 * with ChannelUnsupportedError naming `feature`. Remote files (no `path`) are kept.
 */
export function sendableAttachments(
  attachments: readonly Attachment[],
  text: string,
  check: (path: string) => void,
  { feature, leftOut }: { feature: string; leftOut: (reason: string) => void },
): Attachment[] {
  let kept = [...attachments];
  for (const attachment of attachments) {
    if (attachment.path === undefined) continue;
    try {
      check(attachment.path);
    } catch (error) {
      if (kept.length === 1 && text === "") {
        throw new ChannelUnsupportedError((error as Error).message, { feature });
      }
      leftOut((error as Error).message);
      kept = kept.filter((a) => a !== attachment);
    }
  }
  return kept;
}
