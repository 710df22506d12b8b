/**
 * Files people post reach the agent as local files: each is downloaded with the bot token to
 * $NEXO_STATE_DIR/media/in/<conversation>/ and named in the message text (common's
 * textWithAttachments). The token goes only to Slack's file host (files.slack.com) or to the
 * configured Web API's own origin: a file URL in an event pointing anywhere else is not fetched,
 * since the Authorization header would hand the token to that host.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type Attachment, kindFromMime, mimeFromName } from "@nexo/channels-common";
import type { SlackFile } from "./inbound.js";

const SLACK_FILE_HOST = "https://files.slack.com";
const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface DownloadOptions {
  botToken: string;
  apiUrl: string;
  stateDir: string;
  /** A file-name-safe name of the conversation. */
  folder: string;
  messageTs: string;
  files: readonly SlackFile[];
  maxBytes: number;
}

export async function downloadFiles(
  options: DownloadOptions,
): Promise<{ attachments: Attachment[]; problems: string[] }> {
  const attachments: Attachment[] = [];
  const problems: string[] = [];
  const allowedOrigins = new Set([SLACK_FILE_HOST, new URL(options.apiUrl).origin]);
  const dir = join(options.stateDir, "media", "in", options.folder);
  let index = 0;
  for (const file of options.files) {
    const name = safeName(file.name ?? `file-${index}`);
    const url = file.url_private_download ?? file.url_private;
    index += 1;
    if (url === undefined) continue;
    if (!allowedOrigins.has(new URL(url).origin)) {
      problems.push(`[file ${name} not downloaded: it is not on Slack's file host]`);
      continue;
    }
    if (file.size !== undefined && file.size > options.maxBytes) {
      problems.push(`[file ${name} not downloaded: ${file.size} bytes is over SLACK_MEDIA_MAX_BYTES]`);
      continue;
    }
    try {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${options.botToken}` },
        redirect: "error",
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length > options.maxBytes) {
        problems.push(`[file ${name} not kept: ${bytes.length} bytes is over SLACK_MEDIA_MAX_BYTES]`);
        continue;
      }
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `${options.messageTs.replace(".", "-")}-${index - 1}-${name}`);
      writeFileSync(path, bytes, { mode: 0o600 });
      const mime = file.mimetype ?? mimeFromName(name);
      attachments.push({
        kind: kindFromMime(mime),
        path,
        file_name: name,
        size_bytes: bytes.length,
        ...(mime === undefined ? {} : { mime_type: mime }),
      });
    } catch (error) {
      problems.push(`[file ${name} could not be downloaded: ${(error as Error).message}]`);
    }
  }
  return { attachments, problems };
}

function safeName(name: string): string {
  const cleaned = basename(name)
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 100);
  return cleaned === "" || cleaned.startsWith(".") ? `file${cleaned}` : cleaned;
}
