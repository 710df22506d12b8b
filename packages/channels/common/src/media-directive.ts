/**
 * How an agent sends a file with its reply: a line of its own, `MEDIA: <url or path>`, anywhere
 * in the reply (the convention other agent gateways use, so models and prompts written for them
 * work here). nexo's router sends replies as text; each channel plugin takes those lines out of
 * the text and sends each file as an attachment, after the text. Lines inside the reply that
 * merely mention the word keep their place: only a line that is exactly the directive counts.
 */
import { type Attachment, kindFromMime, mimeFromName } from "./attachment.js";

const DIRECTIVE = /^\s*MEDIA:\s*(\S+)\s*$/;

export interface SplitReply {
  /** The reply without its directive lines (trimmed; may be empty). */
  text: string;
  attachments: Attachment[];
}

/** `http(s)://…` is a URL; an absolute path or `file://` URL is a local file. */
export function attachmentFromReference(reference: string, caption?: string): Attachment | undefined {
  let url: string | undefined;
  let path: string | undefined;
  if (/^https?:\/\//i.test(reference)) url = reference;
  else if (reference.startsWith("file://")) {
    try {
      path = decodeURIComponent(new URL(reference).pathname);
    } catch {
      return undefined;
    }
  } else if (reference.startsWith("/")) path = reference;
  else return undefined;
  const name = (path ?? new URL(url!).pathname).split("/").pop() || undefined;
  const mime = name === undefined ? undefined : mimeFromName(name);
  return {
    kind: kindFromMime(mime),
    ...(path === undefined ? {} : { path }),
    ...(url === undefined ? {} : { url }),
    ...(mime === undefined ? {} : { mime_type: mime }),
    ...(name === undefined ? {} : { file_name: name }),
    ...(caption === undefined ? {} : { caption }),
  };
}

export function splitReplyMedia(reply: string): SplitReply {
  const kept: string[] = [];
  const attachments: Attachment[] = [];
  for (const line of reply.split("\n")) {
    const match = DIRECTIVE.exec(line);
    const attachment = match === null ? undefined : attachmentFromReference(match[1]!);
    if (attachment === undefined) kept.push(line);
    else attachments.push(attachment);
  }
  return { text: kept.join("\n").trim(), attachments };
}
