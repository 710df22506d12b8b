/**
 * The parts every nexo channel plugin needs, written once: the shared attachment shape and the
 * `MEDIA:` reply directive, media roots for local uploads, inbound and outbound allowlists,
 * per-contact rate limits, the durable outbound queue with delivery status, redaction of
 * credentials in everything the plugin logs, the plugin process that serves a channel, and the
 * parts of a channel's life they all share (one instance at a time, serial start/stop, settings).
 */

export { Allowlist, ChannelConfigError, KnownContacts, OutboundPolicy } from "./allowlist.js";
export {
  ATTACHMENT_KINDS,
  type Attachment,
  type AttachmentKind,
  AttachmentSchema,
  describeAttachment,
  kindFromMime,
  mimeFromName,
  textWithAttachments,
} from "./attachment.js";
export { type CredentialCodec, CredentialFiles } from "./credential-files.js";
export { type ChannelEnv, envInteger, envOneOf } from "./env.js";
export { writeFileAtomic } from "./files.js";
export {
  instanceLabel,
  isRunningInstance,
  SerialSteps,
  settingsForStart,
  settingsOrDefaults,
} from "./lifecycle.js";
export { attachmentFromReference, type SplitReply, splitReplyMedia } from "./media-directive.js";
export { MediaPathRefusedError, MediaRoots, sendableAttachments } from "./media-roots.js";
export {
  type DeliveryStatus,
  Outbox,
  type OutboxOptions,
  type OutboxRecord,
  PermanentDeliveryError,
  RetryableDeliveryError,
} from "./outbox.js";
export {
  assertSendable,
  type OutgoingContent,
  outgoingContent,
  type SendableMessage,
} from "./outgoing.js";
export { RateLimiter, type RateLimitOptions } from "./rate-limit.js";
export { REDACTED, Redactor, redactStderr } from "./redact.js";
export {
  type ChannelPluginSpec,
  type ChannelWiring,
  checkedFeatures,
  type OutboundMessage,
  type ServedChannel,
  serveChannelPlugin,
  wrongKind,
} from "./serve.js";
export { splitText } from "./text.js";
export { TypingIndicator, type TypingOptions } from "./typing.js";
