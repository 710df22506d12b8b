/**
 * Inbound files: getFile for the path, then a download from `<api root>/file/bot<token>/<path>`
 * into $NEXO_STATE_DIR/media/in/<chat>/ — the shared Attachment with `path` set, which the agent
 * is told about. A file larger than TELEGRAM_MEDIA_MAX_BYTES (or the Bot API's 20 MB) is not
 * downloaded: the agent is told it arrived and why it is not there. The download URL holds the
 * token, so its errors are reported without it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Attachment } from "@nexo/channels-common";
import type { Api } from "grammy";
import type { RemoteFile } from "./inbound.js";

const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface Downloaded {
  attachments: Attachment[];
  /** One line per file that could not be fetched, for the agent's text. */
  problems: string[];
}

const safeName = (name: string): string =>
  name
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(0, 100) || "file";

export async function downloadFiles(options: {
  api: Api;
  token: string;
  apiRoot: string;
  stateDir: string;
  chatId: string;
  telegramMessageId: number;
  files: readonly RemoteFile[];
  maxBytes: number;
}): Promise<Downloaded> {
  const attachments: Attachment[] = [];
  const problems: string[] = [];
  const dir = join(options.stateDir, "media", "in", safeName(options.chatId));
  for (const [index, file] of options.files.entries()) {
    const label = `${file.kind}${file.file_name === undefined ? "" : ` "${file.file_name}"`}`;
    if (file.size_bytes !== undefined && file.size_bytes > options.maxBytes) {
      problems.push(
        `[${label} not downloaded: ${file.size_bytes} bytes is over the ${options.maxBytes}-byte limit]`,
      );
      continue;
    }
    try {
      const remote = await options.api.getFile(file.file_id);
      if (remote.file_path === undefined) throw new Error("Telegram gave no file path");
      const res = await fetch(`${options.apiRoot}/file/bot${options.token}/${remote.file_path}`, {
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`the download answered ${res.status}`);
      const bytes = Buffer.from(await res.arrayBuffer());
      if (bytes.length > options.maxBytes)
        throw new Error(`${bytes.length} bytes is over the ${options.maxBytes}-byte limit`);
      const extension = remote.file_path.includes(".")
        ? remote.file_path.slice(remote.file_path.lastIndexOf("."))
        : "";
      const name = `${options.telegramMessageId}-${index}-${safeName(file.file_name ?? `${file.kind}${extension}`)}`;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, name);
      writeFileSync(path, bytes, { mode: 0o600 });
      attachments.push({
        kind: file.kind,
        path,
        size_bytes: bytes.length,
        ...(file.mime_type === undefined ? {} : { mime_type: file.mime_type }),
        ...(file.file_name === undefined ? {} : { file_name: file.file_name }),
      });
    } catch (error) {
      problems.push(
        `[${label} could not be downloaded: ${(error as Error).message.split(options.token).join("[REDACTED]")}]`,
      );
    }
  }
  return { attachments, problems };
}
