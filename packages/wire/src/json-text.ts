/**
 * A value already serialized as JSON text. A request handler may return one as its result and the
 * peer puts the text into the reply frame as it is, instead of serializing the value a second
 * time: a handler that had to serialize its result anyway (the plugin SDK checks that a tool's
 * result can be sent, and how large it is) pays for one serialization, not two. A request's params
 * may be one too (`peer.request(method, new JsonText(...))`): a caller that builds the same params
 * text on every call (the plugin host's tool.invoke) splices it instead of walking the envelope.
 *
 * The text must be what `JSON.stringify` produced (one JSON value, no raw newline, no
 * indentation); the peer trusts it, it does not parse it again.
 */
export class JsonText {
  constructor(readonly json: string) {}
}
