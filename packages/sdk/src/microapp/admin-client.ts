/**
 * The microapp's calls to the daemon, typed from the wire's method tables: every `nexo/admin/*`
 * method of `adminMethods` and `nexo/dispatch` of `microappOutboundMethods`. Nothing here is
 * written per method: the client's shape is derived from the table's method names, params and
 * results from its zod schemas, and each reply is checked against its result schema.
 *
 *   await app.admin.agents.list({ active_only: true });          // → {agents: [...]}
 *   await app.admin.whatsapp.bot.send({ agent_id, bot_jid, text });
 *   await app.admin.call("agents/get", { agent_id: "ana" });       // the same, by name
 *   await app.dispatch({ channel: "whatsapp", to: "+57…", body: "hi" });
 *
 * The methods whose params carry `operator_token_hash` (processing pause/resume/intervention,
 * escalations/resolve) get it from `setOperatorTokenHash(source)` when a source is set: the
 * source's value replaces whatever the caller passed, so a rotated identity reaches the next call.
 */
import {
  Caller,
  CapabilityNotGrantedError,
  InvalidParamsError,
  type ParamsIn,
  type RequestOptions,
  type RequestSender,
  type ResultOf,
} from "@nexo/wire";
import { admin, microapp } from "@nexo/wire/schemas";
import { MicroappDefinitionError } from "./errors.js";

const outboundMethods = { ...admin.adminMethods, ...microapp.microappOutboundMethods };
type OutboundTable = typeof outboundMethods;
type AdminTable = typeof admin.adminMethods;

/** An admin method by its name after `nexo/admin/`: `"agents/list"`, `"whatsapp/bot/send"`, … */
export type AdminMethod = admin.AdminMethodName extends infer N
  ? N extends `nexo/admin/${infer Short}`
    ? Short
    : never
  : never;
type Full<S extends AdminMethod> = `nexo/admin/${S}` & admin.AdminMethodName;

type StampedMethod = (typeof admin.OPERATOR_STAMPED_METHODS)[number];
/** `operator_token_hash` becomes optional: the client fills it in from its source. */
type HashOptional<P> = { [K in keyof P as K extends "operator_token_hash" ? never : K]: P[K] } & {
  operator_token_hash?: string;
};

/** What a call of admin method `S` takes. */
export type AdminCallParams<S extends AdminMethod> =
  Full<S> extends StampedMethod ? HashOptional<ParamsIn<AdminTable, Full<S>>> : ParamsIn<AdminTable, Full<S>>;
/** What a call of admin method `S` resolves with (the reply, checked and parsed). */
export type AdminCallResult<S extends AdminMethod> = ResultOf<AdminTable, Full<S>>;

/** Params may be left out when the method takes none or only optional ones. */
type CallArgs<P> = undefined extends P
  ? [params?: P, options?: RequestOptions]
  : Record<never, never> extends P
    ? [params?: P, options?: RequestOptions]
    : [params: P, options?: RequestOptions];

export type AdminMethodCall<S extends AdminMethod> = (
  ...args: CallArgs<AdminCallParams<S>>
) => Promise<AdminCallResult<S>>;

/** The next path segment of the admin methods under `Prefix`. */
type Segment<Prefix extends string, S extends string = AdminMethod> = S extends `${Prefix}${infer Rest}`
  ? Rest extends `${infer Head}/${string}`
    ? Head
    : Rest
  : never;

/** `admin.<domain>.<verb>(params)`, nested as the method names are. */
export type AdminTree<Prefix extends string = ""> = {
  readonly [H in Segment<Prefix>]: `${Prefix}${H}` extends AdminMethod
    ? AdminMethodCall<`${Prefix}${H}`>
    : AdminTree<`${Prefix}${H}/`>;
};

export type AdminClient = AdminTree & {
  /** Any admin method by name (after `nexo/admin/`). */
  call<S extends AdminMethod>(method: S, ...args: CallArgs<AdminCallParams<S>>): Promise<AdminCallResult<S>>;
  /**
   * Where `operator_token_hash` comes from for the methods that carry it: called once per such
   * call, its value replaces the caller's. `undefined` removes the source.
   */
  setOperatorTokenHash(source: (() => string) | undefined): void;
};

export type DispatchParams = ParamsIn<OutboundTable, "nexo/dispatch">;
export type DispatchResult = ResultOf<OutboundTable, "nexo/dispatch">;

/** Sends a message through a channel plugin (capability `dispatch_outbound`). */
export type Dispatch = (params: DispatchParams, options?: RequestOptions) => Promise<DispatchResult>;

type Call = (method: string, params: unknown, options?: RequestOptions) => Promise<unknown>;

/** The admin client and `dispatch`, both sending through `sender`. */
export function createOutboundCalls(sender: RequestSender): { admin: AdminClient; dispatch: Dispatch } {
  const caller = new Caller(sender, { requests: outboundMethods });
  let tokenHash: (() => string) | undefined;

  const stamp = (method: string, params: unknown): unknown => {
    if (!admin.isOperatorStampedMethod(method)) return params;
    if (tokenHash !== undefined) return { ...(params as object), operator_token_hash: tokenHash() };
    if (typeof (params as { operator_token_hash?: unknown } | undefined)?.operator_token_hash === "string") {
      return params;
    }
    throw new InvalidParamsError(
      `${method} needs operator_token_hash: pass it, or set admin.setOperatorTokenHash(() => hash)`,
    );
  };

  const call: Call = async (short, params, options) => {
    const method = `${admin.ADMIN_METHOD_PREFIX}${short}`;
    if (!admin.isAdminMethodName(method)) throw new TypeError(`unknown admin method: ${short}`);
    return remembered(method, caller.request(method, stamp(method, params) as never, options));
  };

  const client = buildTree(call) as Record<string, unknown>;
  for (const member of ["call", "setOperatorTokenHash"]) {
    if (Object.hasOwn(client, member)) {
      throw new MicroappDefinitionError(`the admin method table has a domain named "${member}"`);
    }
  }
  client.call = call;
  client.setOperatorTokenHash = (source: (() => string) | undefined) => {
    if (source !== undefined && typeof source !== "function") {
      throw new TypeError("setOperatorTokenHash takes a function returning the hash, or undefined");
    }
    tokenHash = source;
  };
  const dispatch: Dispatch = (params, options) =>
    remembered("nexo/dispatch", caller.request("nexo/dispatch", params, options));
  return { admin: Object.freeze(client) as unknown as AdminClient, dispatch };
}

/**
 * Failures of the microapp's own calls, with the sentence an agent should read when one escapes a
 * tool handler. Such an error must not answer tools/call with its code: the daemon's -32004
 * (capability not granted) means "external auth failed" on a microapp's reply.
 */
const callFailures = new WeakMap<object, string>();

function remembered<T>(method: string, call: Promise<T>): Promise<T> {
  return call.catch((error: unknown) => {
    if (error !== null && typeof error === "object") callFailures.set(error, describeFailure(method, error));
    throw error;
  });
}

function describeFailure(method: string, error: object): string {
  if (error instanceof CapabilityNotGrantedError) {
    return `${method} refused: the operator has not granted the capability ${error.capability}`;
  }
  return `${method} failed: ${(error as Error).message ?? String(error)}`;
}

/** The sentence for an error a call to the daemon failed with; undefined for any other error. */
export function callFailureText(error: unknown): string | undefined {
  return error !== null && typeof error === "object" ? callFailures.get(error) : undefined;
}

/** One function per admin method, nested by the segments of its name. */
function buildTree(call: Call): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const method of admin.ADMIN_METHOD_NAMES) {
    const short = method.slice(admin.ADMIN_METHOD_PREFIX.length);
    const segments = short.split("/");
    const leaf = segments.pop()!;
    let node = root;
    for (const segment of segments) {
      node[segment] ??= {};
      node = node[segment] as Record<string, unknown>;
    }
    node[leaf] = (params?: unknown, options?: RequestOptions) => call(short, params, options);
  }
  return root;
}
