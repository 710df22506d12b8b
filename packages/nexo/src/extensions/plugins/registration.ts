/** Registering several wrappers at once: all of them, or none (a failure rolls back the rest). */

/** Calls `register` for each item; returns one function that removes everything it registered. */
export function registerEach<T>(items: Iterable<T>, register: (item: T) => () => void): () => void {
  const removers: Array<() => void> = [];
  const removeAll = () => {
    for (const remove of removers.splice(0).reverse()) remove();
  };
  try {
    for (const item of items) removers.push(register(item));
  } catch (error) {
    removeAll();
    throw error;
  }
  return removeAll;
}
