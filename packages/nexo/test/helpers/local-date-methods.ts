/**
 * Runs `body` with every Date method that can reach ICU's time-zone data (all but the UTC getters,
 * `getTime` and `valueOf`) made to throw: what `body` calls is then known to leave ICU alone.
 */
export function withoutLocalDateMethods(body: () => void): void {
  const saved = new Map<string, PropertyDescriptor>();
  for (const name of Object.getOwnPropertyNames(Date.prototype)) {
    if (name === "constructor" || name === "getTime" || name === "valueOf" || /^getUTC/.test(name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(Date.prototype, name)!;
    if (typeof descriptor.value !== "function") continue;
    saved.set(name, descriptor);
    Object.defineProperty(Date.prototype, name, {
      ...descriptor,
      value() {
        throw new Error(`Date.prototype.${name} was called`);
      },
    });
  }
  try {
    body();
  } finally {
    for (const [name, descriptor] of saved) Object.defineProperty(Date.prototype, name, descriptor);
  }
}
