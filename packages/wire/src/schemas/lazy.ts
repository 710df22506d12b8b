/**
 * Schemas built on their first use rather than when their module is imported.
 *
 * Building a zod schema is not free (each one is an object with its own internals and checks),
 * and a protocol module declares far more of them than one process uses: a one-shot
 * `nexo agent --json-stream` parses one command and never validates the events it writes, and an
 * idle daemon whose plugins offer no LLM or memory never reads the plugin protocol's `llm.*` or
 * `memory.*` messages.
 *
 * `lazySchema(group, build)` stands in for `build()`: the same schema, the same type, the same
 * validation, built the first time anything reads a property of it (a parse, a method, another
 * schema that composes it and reads it). `group` names the set a schema belongs to
 * (`jsonstream.events`, `plugin.llm`), so tests can hold which groups a path builds
 * ({@link builtSchemaGroups}).
 *
 * How, and why this way: the stand-in is an empty object whose prototype is a Proxy. Reading any
 * property the stand-in lacks (all of them) reaches the Proxy, which builds the schema and then
 * makes the built schema the stand-in's prototype in its own place. From then on there is no
 * Proxy on the way: every read is an ordinary one-step prototype lookup, which V8's inline caches
 * serve as they serve the schema's own properties. Such schemas can therefore sit on per-message
 * paths (the plugin protocol's `tool.invoke`, `broker.event`) at no cost per call; a Proxy in
 * front of the schema for good cost a trap on every property read, for as long as the process ran.
 * zod's methods read `this`, so a method called on the stand-in sees the stand-in, whose every
 * property is the built schema's: `optional()`, `array()` and the like wrap the stand-in, which
 * behaves as the schema.
 *
 * What the stand-in does not do is list the built schema's own properties (`Object.keys`, spread):
 * they are its prototype's. Nothing reads a schema that way; zod reads properties by name.
 */

const builtGroups = new Set<string>();

/** The groups of which at least one lazy schema has been built in this process. */
export function builtSchemaGroups(): ReadonlySet<string> {
  return builtGroups;
}

/** A lazy schema not yet built: the Proxy's target, holding what building it needs. */
interface Unbuilt {
  readonly group: string;
  readonly build: () => object;
  standIn: object;
  built: object | undefined;
}

function built(unbuilt: Unbuilt): object {
  if (unbuilt.built === undefined) {
    const schema = unbuilt.build();
    unbuilt.built = schema;
    builtGroups.add(unbuilt.group);
    // The Proxy leaves the stand-in's prototype chain here: later reads never meet it.
    Object.setPrototypeOf(unbuilt.standIn, schema);
  }
  return unbuilt.built;
}

/**
 * The traps a property read, write or `in` test of the stand-in reaches while it has no schema
 * yet, and `instanceof`, which walks the prototype chain. `receiver` is the stand-in (or an
 * object built on it), so getters and setters see it as `this`, as they will once built.
 */
const beforeFirstUse: ProxyHandler<Unbuilt> = {
  get: (unbuilt, key, receiver) => Reflect.get(built(unbuilt), key, receiver),
  set: (unbuilt, key, value, receiver) => Reflect.set(built(unbuilt), key, value, receiver),
  has: (unbuilt, key) => Reflect.has(built(unbuilt), key),
  getPrototypeOf: (unbuilt) => built(unbuilt),
  // Nothing of the target (the bookkeeping above) shows through the Proxy.
  ownKeys: () => [],
  getOwnPropertyDescriptor: () => undefined,
  defineProperty: () => false,
  deleteProperty: () => true,
};

/** `build()`, deferred to the first time the schema is used. */
export function lazySchema<T extends object>(group: string, build: () => T): T {
  const unbuilt: Unbuilt = { group, build, standIn: {}, built: undefined };
  unbuilt.standIn = Object.create(new Proxy(unbuilt, beforeFirstUse)) as object;
  return unbuilt.standIn as T;
}

/**
 * Fields several schemas of a module spread into their shapes, made by the first of them to be
 * built and shared by the rest. Not a module-level object: calling `.optional()` (or anything) on a
 * lazy schema while the module loads would build that schema whenever the module is imported.
 */
export function sharedFields<T extends object>(build: () => T): () => T {
  let fields: T | undefined;
  return () => {
    fields ??= build();
    return fields;
  };
}

/**
 * A schema built on use and held only weakly: unlike {@link lazySchema}, which keeps what it built
 * for the process's life, this one builds the schema on the first property read and holds it
 * through a WeakRef, so that once no parse holds it a collection frees it and the next read builds
 * it again. For schemas a long-lived process reads at start, on a reload or an edit, and never per
 * message: the config files' (packages/nexo/src/config/disposable-schema.ts says which and what a
 * rebuild costs) and extensions.yaml's. The stand-in forwards property reads, `in`, assignments and
 * the prototype, so `instanceof` and every method (`parse`, `safeParse`, `_zod`) behave as the
 * schema's own. Compose schemas inside the builder from plain local ones: a stand-in embedded in
 * another schema would be rebuilt by every parse that reaches it.
 */
export function disposableSchema<S extends object>(build: () => S): S {
  let held: WeakRef<S> | undefined;
  const current = (): S => {
    let schema = held?.deref();
    if (schema === undefined) {
      schema = build();
      held = new WeakRef(schema);
    }
    return schema;
  };
  return new Proxy({} as S, {
    get: (_target, key) => Reflect.get(current(), key),
    has: (_target, key) => Reflect.has(current(), key),
    set: (_target, key, value) => Reflect.set(current(), key, value),
    getPrototypeOf: () => Reflect.getPrototypeOf(current()),
  });
}
