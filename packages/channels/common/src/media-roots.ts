/**
 * Which local files a channel may upload. The path to send comes from a model's reply or a caller,
 * so it is untrusted: without this rule a prompt could make the bot post the daemon's config or
 * keys to a chat. A file is sent only when its real path (symbolic links resolved) lies under one
 * of the operator's media roots; everything else is refused with the reason.
 */
import { realpathSync } from "node:fs";
import { resolve, sep } from "node:path";

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
