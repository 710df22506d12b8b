/**
 * The broker: one interface, an in-process implementation and a NATS one, NATS topic semantics.
 * See docs/broker.md.
 */
export {
  type BrokerConfig,
  type BrokerConfigInput,
  BrokerConfigSchema,
  type CreateBrokerOptions,
  createBroker,
  LocalBrokerConfigSchema,
  NatsBrokerConfigSchema,
} from "./config.js";
export { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_QUEUE_DEPTH, MAX_QUEUE_DEPTH } from "./core.js";
export { BrokerError, type BrokerErrorCode } from "./errors.js";
export { createEvent, DEFAULT_MAX_EVENT_BYTES, decodeEvent, encodeEvent } from "./event.js";
export { LocalBroker, type LocalBrokerOptions } from "./local.js";
export { NatsBroker, type NatsBrokerOptions } from "./nats.js";
export { DeliveryQueue, type DeliveryQueueOptions } from "./queue.js";
export {
  isValidPattern,
  isValidTopic,
  MAX_TOPIC_LENGTH,
  topicMatches,
  validatePattern,
  validateTopic,
} from "./topic.js";
export type {
  Broker,
  BrokerEvent,
  BrokerEventInit,
  BrokerHandler,
  BrokerKind,
  BrokerReadiness,
  BrokerStats,
  SubscribeOptions,
  Subscription,
  SubscriptionStats,
  Unlisten,
} from "./types.js";
export { BrokerEventSchema } from "./types.js";
