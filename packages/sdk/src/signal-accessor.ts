/**
 * The `signal` of a handler's context, made only when a handler reads it: the plugin SDK's
 * InvocationContext and the microapp SDK's ToolCallContext each keep their task in a private field
 * and define `signal` as an own enumerable accessor with one descriptor shared by every context of
 * the class. Own and enumerable, so a handler that spreads its context (`{ ...ctx, extra }`) passes
 * the signal on; shared, so the contexts keep one fast shape (docs/performance.md).
 */
export function signalAccessor<C>(signalOf: (context: C) => AbortSignal): PropertyDescriptor {
  return {
    get(this: C): AbortSignal {
      return signalOf(this);
    },
    enumerable: true,
    configurable: true,
  };
}
