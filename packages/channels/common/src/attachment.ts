/**
 * One attachment shape for every channel, both ways: what a channel publishes with an inbound
 * message (`attachments` in the broker event's payload, next to `text`) and what it is asked to
 * send (`channel.send_outbound` `media`, or a `MEDIA:` line in an agent's reply, see
 * ./media-directive.ts). A channel translates it to and from its own network's media types.
 *
 * Inbound, `path` is a file the plugin downloaded under its own state directory; outbound, `url`
 * is a remote file the network fetches itself and `path` a local file the plugin uploads — only
 * from the directories the operator allowed (./media-roots.ts), because the text that names it
 * may come from a model.
 */
import { z } from "zod";

export const ATTACHMENT_KINDS = ["image", "voice", "audio", "video", "document"] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];

export const AttachmentSchema = z
  .object({
    kind: z.enum(ATTACHMENT_KINDS),
    /** A local file: downloaded (inbound) or to upload (outbound). */
    path: z.string().min(1).optional(),
    /** A remote file, http(s). */
    url: z.string().url().optional(),
    mime_type: z.string().min(1).optional(),
    file_name: z.string().min(1).optional(),
    size_bytes: z.number().int().nonnegative().optional(),
    caption: z.string().optional(),
  })
  .refine((a) => a.path !== undefined || a.url !== undefined, {
    message: "an attachment needs a path or a url",
  });
export type Attachment = z.infer<typeof AttachmentSchema>;

const EXTENSION_MIME: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  wav: "audio/wav",
  mp4: "video/mp4",
  mov: "video/quicktime",
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  zip: "application/zip",
};

/** The MIME type a file name's extension suggests, if we know it. */
export function mimeFromName(name: string): string | undefined {
  const dot = name.lastIndexOf(".");
  if (dot < 0) return undefined;
  const clean = name
    .slice(dot + 1)
    .toLowerCase()
    .replace(/[?#].*$/, "");
  return EXTENSION_MIME[clean];
}

/**
 * The kind to send a file as when nobody said: images as images, Ogg/Opus as a voice note (what
 * the messengers record), other audio as audio, video as video, everything else as a document.
 */
export function kindFromMime(mime: string | undefined): AttachmentKind {
  if (mime === undefined) return "document";
  if (mime.startsWith("image/") && mime !== "image/svg+xml") return "image";
  if (mime === "audio/ogg") return "voice";
  if (mime.startsWith("audio/")) return "audio";
  if (mime.startsWith("video/")) return "video";
  return "document";
}

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The line the agent reads for an inbound attachment: nexo's router hands a turn the message's
 * text, so each attachment is named there with where the file is, e.g.
 * `[image attached: /var/lib/nexo/plugins/telegram/media/in/42/7-photo.jpg (image/jpeg, 31.2 KB)]`.
 */
export function describeAttachment(attachment: Attachment): string {
  const where = attachment.path ?? attachment.url ?? "";
  const facts = [
    attachment.mime_type,
    attachment.size_bytes === undefined ? undefined : humanSize(attachment.size_bytes),
  ]
    .filter((fact) => fact !== undefined)
    .join(", ");
  const name = attachment.file_name === undefined ? "" : ` "${attachment.file_name}"`;
  return `[${attachment.kind}${name} attached: ${where}${facts === "" ? "" : ` (${facts})`}]`;
}

/** An inbound message's text for the agent: what the person wrote, then one line per attachment. */
export function textWithAttachments(text: string, attachments: readonly Attachment[]): string {
  return [text, ...attachments.map(describeAttachment)].filter((part) => part.trim() !== "").join("\n");
}
