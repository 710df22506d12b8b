/**
 * Files people attach reach the agent as local files: each is downloaded to
 * $NEXO_STATE_DIR/media/in/<conversation>/ and named in the message text (common's
 * textWithAttachments). Only URLs on Discord's CDN (DISCORD_CDN_URL's origin, and
 * media.discordapp.net beside the default CDN) are fetched, without redirects: an attachment URL is
 * data from the network, and fetching anything it names would let a message make this process
 * request the daemon's own ports or the machine's network (SSRF).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type Attachment, kindFromMime, mimeFromName } from "@nexo/channels-common";
import type { InboundAttachment } from "./inbound.js";

const DEFAULT_CDN = "https://cdn.discordapp.com";
const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface DownloadOptions {
  cdnUrl: string;
  stateDir: string;
  /** A file-name-safe name of the conversation. */
  folder: string;
  messageId: string;
  files: readonly InboundAttachment[];
  maxBytes: number;
}

export function cdnOrigins(cdnUrl: string): Set<string> {
  const origin = new URL(cdnUrl).origin;
  return new Set(origin === DEFAULT_CDN ? [origin, "https://media.discordapp.net"] : [origin]);
}

export async function downloadFiles(
  options: DownloadOptions,
): Promise<{ attachments: Attachment[]; problems: string[] }> {
  const attachments: Attachment[] = [];
  const problems: string[] = [];
  const allowed = cdnOrigins(options.cdnUrl);
  const dir = join(options.stateDir, "media", "in", options.folder);
  let index = 0;
  for (const file of options.files) {
    const name = safeName(file.name || `file-${index}`);
    index += 1;
    let origin: string | undefined;
    try {
      origin = new URL(file.url).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || !allowed.has(origin)) {
      problems.push(`[file ${name} not downloaded: it is not on Discord's CDN]`);
      continue;
    }
    if (file.size > options.maxBytes) {
      problems.push(`[file ${name} not downloaded: ${file.size} bytes is over DISCORD_MEDIA_MAX_BYTES]`);
      continue;
    }
    try {
      const response = await fetch(file.url, {
        redirect: "error",
        signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length > options.maxBytes) {
        problems.push(`[file ${name} not kept: ${bytes.length} bytes is over DISCORD_MEDIA_MAX_BYTES]`);
        continue;
      }
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `${options.messageId}-${index - 1}-${name}`);
      writeFileSync(path, bytes, { mode: 0o600 });
      const mime = file.contentType?.split(";")[0]?.trim() || mimeFromName(name);
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
