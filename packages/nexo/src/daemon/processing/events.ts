/**
 * Where operator-takeover events go: processing state changes, held inbound messages dropped at the
 * bound, escalations requested and resolved. One small interface, so the daemon decides once where
 * agent events are recorded and pushed.
 */
import type { admin } from "@nexo/wire/schemas";

export type TakeoverEvent =
  | admin.ProcessingStateChangedEvent
  | admin.PendingInboundsDroppedEvent
  | admin.EscalationRequestedEvent
  | admin.EscalationResolvedEvent;

export interface TakeoverEvents {
  emit(event: TakeoverEvent): void;
}
