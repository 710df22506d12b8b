/**
 * Schemas built on their first use rather than when their module is imported.
 *
 * Building a zod schema is not free (each one is an object with its own internals, closures and
 * bound methods), and a protocol module declares far more of them than one process uses: a
 * one-shot `nexo agent --json-stream` parses one command and never validates the events it writes,
 * yet importing the json-stream module built all ~300 of its schemas before the first request.
 *
 * `lazySchema(group, build)` stands in for `build()`: the same schema, the same type, the same
 * validation, built the first time anything touches it (a parse, a property, another schema that
 * composes it — which then builds it as part of itself). Every access goes through a Proxy to the
 * built schema, so a lazy schema costs one trap per property read; that is nothing next to the
 * parse it starts, but it is why hot per-message schemas of a throughput path should be weighed
 * before they are made lazy. `group` names the set a schema belongs to (`jsonstream.events`), so
 * tests can hold which groups a path builds ({@link builtSchemaGroups}).
 */

const builtGroups = new Set<string>();

/** The groups of which at least one lazy schema has been built in this process. */
export function builtSchemaGroups(): ReadonlySet<string> {
  return builtGroups;
}

/** `build()`, deferred to the first time the schema is used. */
export function lazySchema<T extends object>(group: string, build: () => T): T {
  let schema: T | undefined;
  const real = (): T => {
    if (schema === undefined) {
      schema = build();
      builtGroups.add(group);
    }
    return schema;
  };
  // The target only satisfies the Proxy's invariants: it has no own properties and stays
  // extensible, so every trap may answer for the built schema (a property the schema holds as
  // non-configurable is reported configurable, which the invariants allow here).
  return new Proxy(Object.create(null) as T, {
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
